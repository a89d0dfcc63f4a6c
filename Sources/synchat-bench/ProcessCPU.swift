import Foundation

/// CPU time a running process has used, from /proc, as precise as the kernel tells it: the
/// sum of its threads' `schedstat` (nanoseconds on a CPU) while its threads are the same at
/// both samples, else `stat`'s user + system ticks (10 ms each, but counting threads that
/// ended). At rest synchat uses a few tens of milliseconds a minute: ticks alone are too
/// coarse to tell 0.04 % from 0.06 %.
struct ProcessCPU {
    let pid: String
    private let threads: [String]
    private let nanoseconds: Double?
    private let ticks: Double?

    init?(pid: String) {
        self.pid = pid
        threads = Self.threads(pid)
        nanoseconds = Self.onCPU(pid, threads)
        ticks = Self.ticks(pid)
        if nanoseconds == nil && ticks == nil { return nil }
    }

    /// Seconds of CPU used since `earlier`, and how they were measured.
    func seconds(since earlier: ProcessCPU) -> (seconds: Double, how: String)? {
        if threads == earlier.threads, let a = earlier.nanoseconds, let b = nanoseconds { return ((b - a) / 1e9, "schedstat") }
        guard let a = earlier.ticks, let b = ticks else { return nil }
        return ((b - a) / Double(sysconf(Int32(_SC_CLK_TCK))), "ticks")
    }

    private static func threads(_ pid: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).sorted()
    }

    private static func onCPU(_ pid: String, _ threads: [String]) -> Double? {
        var sum = 0.0
        for t in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/schedstat", encoding: .utf8),
                  let first = text.split(separator: " ").first, let ns = Double(first) else { return nil }
            sum += ns
        }
        return threads.isEmpty ? nil : sum
    }

    private static func ticks(_ pid: String) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return user + system
    }
}
