import CrashHarness
import Foundation
import Testing

@Suite("Crash safety", .timingSensitive)
struct CrashTests {
    @Test("SIGKILL at random moments under heavy traffic: integrity ok, nothing lost, nothing twice, no cursor ahead")
    func killAtRandom() throws {
        let binary = BuiltProducts.bench  // its `crash-child` mode is the writer
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build first (swift build): \(binary)")
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        var harness = CrashHarness(binary: binary, store: dir.file("crash.sqlite"))
        harness.lifetime = 300...900
        let report = harness.run(kills: 8)
        #expect(report.kills == 8)
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.messages > 100)  // the child really wrote, between kills, under load
    }
}
