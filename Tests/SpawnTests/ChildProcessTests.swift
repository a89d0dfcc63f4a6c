import Foundation
import Spawn
import Testing

/// What a child process inherits: its three standard descriptors, nothing else of the parent's.
@Suite("Child processes: only standard input, output and errors are handed on")
struct ChildProcessTests {
    @Test("a descriptor the parent holds open without close-on-exec (as SwiftNIO opens its sockets) is not the child's")
    func nothingInherited() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        #expect(fcntl(ends[1], F_GETFD) & FD_CLOEXEC == 0)  // as an accepted NIO socket is
        let listed = try ChildProcess.run(["/bin/sh", "-c", "ls /proc/$$/fd"], captureOutput: true).out
        let descriptors = Set(listed.split(separator: "\n").compactMap { Int32($0) })
        #expect(descriptors.isSuperset(of: [0, 1, 2]))
        #expect(descriptors.isDisjoint(with: ends), "the child holds \(descriptors.sorted())")
    }

    @Test("a child run to its end is in a session of its own, so it has no controlling terminal to stop the run with (asciinema cat opens /dev/tty)")
    func ownSession() throws {
        // /proc/self/stat: pid (comm) state ppid pgrp session …
        let r = try ChildProcess.run(["sh", "-c", "cut -d ' ' -f 6,7 /proc/$$/stat"], captureOutput: true)
        let fields = r.out.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(r.status == 0 && fields.count == 2, "\(r)")
        #expect(fields.first != getsid(0), "the child shares the test run's session \(getsid(0))")
        #expect(fields.last == 0, "the child has a controlling terminal: \(r.out)")
    }
}
