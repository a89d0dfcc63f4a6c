import Directives
import RunReports
import Simulation
import SyncCore
import SyncEngine
import Testing

/// In the session: a contact added by address reaches the world, the engine and
/// the store, sends its handshake, and can be written to, renamed and muted by its handle.
@Suite("Contacts added, renamed and muted")
struct ContactDirectiveTests {
    @Test("add ADDRESS: the engine and the store know the contact, its handshake arrives; rename and mute follow")
    func addRenameMute() throws {
        let scenario = try ScenarioParser.parse("""
            duration 10m
            contacts 1
            traffic 0/h
            at 1m add kaspa:qzoe12345678 "Zoë"
            at 2m send kaspa:qzoe12345678 "hi Zoë"
            at 3m contact kaspa:qzoe12345678 "Zoë Q."
            at 4m mute kaspa:qzoe12345678
            """, file: "add")
        let run = ScenarioRun(scenario: scenario, policy: .adaptive)
        run.run()
        // The log names the contact as it was added: by its address, never by another name.
        let lines = run.log.filter(\.event.isDecision).map(\.line)
        expectDecisions(run, matching: { $0.line.contains("kaspa:qzoe") }, [
            "00:01:00.000 world: add kaspa:qzoe12345678 \"Zoë\"",
            "00:01:01.190 message 437a813d from kaspa:qzoe12345678 (handshake) via realtime",
            "00:02:00.000 world: send kaspa:qzoe12345678 \"hi Zoë\"",
            "00:02:00.000 sent 0d4663be to kaspa:qzoe12345678",
            "00:02:00.000 message 0d4663be to kaspa:qzoe12345678 (contextual) via sent",
            "00:02:34.342 message 806475d5 from kaspa:qzoe12345678 (contextual) via realtime",
            "00:03:00.000 world: contact kaspa:qzoe12345678 \"Zoë Q.\"",
            "00:04:00.000 world: muted kaspa:qzoe12345678",
        ])
        #expect(!lines.contains { $0.contains("peer-") })
        let zoe = Address("kaspa:qzoe12345678")
        #expect(run.driver.contact(zoe)?.displayName == "Zoë Q.")
        #expect(run.driver.contact(zoe)?.muted == true)
        #expect(run.storage.contacts().contains { $0.address == zoe && $0.muted })
        let kinds = run.storage.messages(in: zoe).map(\.message.kind)
        #expect(kinds.contains(.handshake))
        #expect(run.storage.messages(in: zoe).contains { $0.message.body == "hi Zoë" && $0.via == .sent })
        #expect(RunSummary(run).messagesLost == 0)
    }

    @Test("an address names only a contact added by it: contact ADDRESS makes none (said in the log), a second add of one address renames it, and mute by address mutes it")
    func addressesNameOnlyWhatWasAdded() throws {
        let scenario = try ScenarioParser.parse("""
            duration 10m
            contacts 1
            traffic 0/h
            at 1m contact kaspa:qnobody12345 "Nobody"
            at 2m add kaspa:qzoe12345678 "Zoë"
            at 3m add kaspa:qzoe12345678 "Zoë again"
            at 4m mute kaspa:qzoe12345678
            """, file: "addresses")
        let run = ScenarioRun(scenario: scenario, policy: .adaptive)
        run.run()
        #expect(run.world.contacts.filter { $0.address.value == "kaspa:qzoe12345678" }.count == 1)
        #expect(!run.world.contacts.contains { $0.handle == "kaspa:qnobody12345" || $0.displayName == "Nobody" })
        expectDecisions(run, matching: about(.world), [
            "00:01:00.000 world: contact kaspa:qnobody12345 \"Nobody\"",
            "00:01:00.000 world: contact kaspa:qnobody12345: no contact has that address (add it first)",
            "00:02:00.000 world: add kaspa:qzoe12345678 \"Zoë\"",
            "00:03:00.000 world: add kaspa:qzoe12345678 \"Zoë again\"",
            "00:04:00.000 world: muted kaspa:qzoe12345678",
            "00:10:00.000 world: script ended; settling for 15m",
        ])
        let zoe = Address("kaspa:qzoe12345678")
        #expect(run.driver.contact(zoe)?.displayName == "Zoë again" && run.driver.contact(zoe)?.muted == true)
        #expect(run.storage.messages(in: zoe).filter { $0.message.kind == .handshake }.count == 1)  // one handshake, not two
    }
}
