import Foundation

/// One synchat per profile. Two processes on one profile both write it: each saves its own
/// world clock and settings, last writer wins, and a mode changed in one is gone within
/// seconds. So the app holds an advisory lock, `flock(LOCK_EX|LOCK_NB)`, on `NAME.sqlite.lock`
/// beside the database (mode 0600), with its pid written in the file for the message the
/// next one prints.
///
/// The kernel drops the lock when its descriptor closes: when the lock is released, at exit,
/// or when the holder is killed (SIGKILL included), so a crash never leaves a profile locked.
/// The file stays behind on purpose: removing it would let a third process lock a new file
/// while a second still holds the old one. A pid in it means nothing without the lock.
///
/// A `flock` belongs to an open file description, so one process that locks the same
/// profile twice is refused too. Only the app locks (`SQLiteChatStorage.openProfile`); tests,
/// the crash harness and benchmarks open stores with `SQLiteChatStorage.open(path:)`.
public final class ProfileLock {
    /// The profile is held by another process.
    public struct Held: ProfileError, Equatable {
        public var profile: String
        public var storePath: String
        /// The holder's pid, as written in the lock file (nil if it could not be read).
        public var holder: Int32?

        public var description: String {
            let who = holder.map { "another synchat (pid \($0))" } ?? "another synchat"
            return "profile \"\(profile)\" (\(storePath)) is in use by \(who); quit it first, or use another --profile"
        }
    }

    /// The lock file: the store's path plus `.lock`.
    public let path: String
    private var descriptor: Int32

    /// Takes the lock of the profile `profile` whose store is `storePath`, or throws `Held`
    /// naming the holder's pid; a lock file that cannot be made is a `StoreError`. The
    /// directory must exist.
    public static func acquire(profile: String, storePath: String) throws -> ProfileLock {
        let path = storePath + ".lock"
        let fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let why = errno
            if why == EACCES || why == EROFS, !FileManager.default.fileExists(atPath: path) {
                // Said as `open(path:)` says it, had it come first.
                throw StoreError(path: (storePath as NSString).deletingLastPathComponent,
                                 message: "the data directory is not writable; fix its permissions, or run with --ephemeral")
            }
            throw StoreError(path: path, message: "cannot open the profile's lock file (\(String(cString: strerror(why)))); fix its permissions, or run with --ephemeral")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let why = errno
            defer { Foundation.close(fd) }
            guard why == EWOULDBLOCK else {
                throw StoreError(path: path, message: "cannot lock the profile (\(String(cString: strerror(why)))); run with --ephemeral")
            }
            throw Held(profile: profile, storePath: storePath, holder: holder(fd))
        }
        // Should this write fail, the lock holds all the same: only the next one's message lacks the pid.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        return ProfileLock(path: path, descriptor: fd)
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// The pid written by the holder. It writes it just after taking the lock, so an empty
    /// file is read again a few times before giving up.
    private static func holder(_ fd: Int32) -> Int32? {
        for attempt in 0..<20 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, buffer.count, 0)
            if n > 0, let text = String(bytes: buffer.prefix(n), encoding: .utf8),
               let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 {
                return pid
            }
            if attempt < 19 { usleep(5_000) }
        }
        return nil
    }

    /// Releases the lock (the file stays). Safe to call more than once.
    public func release() {
        guard descriptor >= 0 else { return }
        // Unlocked first: a child forked meanwhile shares the open file description until it
        // execs (O_CLOEXEC closes it only then), and a close alone would leave the lock with it.
        flock(descriptor, LOCK_UN)
        Foundation.close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
