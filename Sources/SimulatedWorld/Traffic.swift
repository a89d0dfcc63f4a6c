import SyncCore
import SyncEngine

/// Contacts writing to the user: Poisson arrivals at `perHour` over all contacts, and a
/// reply after a short random delay to every message the user sends.
public final class Traffic {
    public var perHour: Double = 0
    /// No arrival is created at or after this instant (the end of a scenario's traffic).
    public var stopsAt: Instant?
    weak var world: SimulatedWorld?
    private let scheduler: Scheduler
    private let timings: WorldTimings
    private var arrivals: RandomStream
    private var replies: RandomStream
    private var started = false
    /// An arrival is scheduled (the Poisson chain is running).
    private var chainRunning = false
    /// What each contact said lately, and when: no contact says the same words twice within
    /// `repeatWindow` (a chat that repeats itself looks like the duplicate it is not).
    private var said: [Address: [(text: String, at: Instant)]] = [:]
    public static let repeatWindow = Interval.minutes(10)

    init(seed: UInt64, scheduler: Scheduler, timings: WorldTimings) {
        self.scheduler = scheduler
        self.timings = timings
        self.arrivals = RandomStream(seed: seed, concern: "traffic")
        self.replies = RandomStream(seed: seed, concern: "replies")
    }

    public func start() {
        guard !started else { return }
        started = true
        scheduleNextArrival()
    }

    /// Nothing arrives while paused (a server's user who is away: contacts that write forever to
    /// someone who never comes back made the server grow until it stopped answering). The
    /// arrival already drawn is dropped when it comes; `unpause` draws the next from then.
    public private(set) var paused = false

    public func pause() { paused = true }

    public func unpause() {
        guard paused else { return }
        paused = false
        if started, !chainRunning { scheduleNextArrival() }
    }

    /// Traffic goes on after its stop (a played scenario handed over to the live world).
    public func resume(perHour rate: Double) {
        perHour = rate
        stopsAt = nil
        if started, !chainRunning { scheduleNextArrival() }
    }

    private func scheduleNextArrival() {
        chainRunning = false
        guard perHour > 0, !paused else { return }
        let wait = arrivals.exponential(perHour: perHour)
        let pick = arrivals.next()
        let payment = arrivals.chance(timings.paymentShare)
        let drawn = arrivals.int(0...(Self.phrases.count - 1))
        let at = scheduler.now + wait
        if let stop = stopsAt, at >= stop { return }
        chainRunning = true
        scheduler.schedule(at: at, "arrival") { [self] in
            if let stop = stopsAt, scheduler.now >= stop { chainRunning = false; return }
            if paused { chainRunning = false; return }
            // Simulated contacts only: the people among the contacts (the other users of a
            // server) write for themselves.
            let writers = world.map { w in w.people == nil ? w.contacts : w.contacts.filter { !w.isPerson($0.address) } } ?? []
            if let world, !writers.isEmpty {
                let contact = writers[Int(pick % UInt64(writers.count))]
                if payment {
                    world.deliverIncoming(from: contact, kind: .payment, body: "\(pick % 900 + 100) KAS")
                } else {
                    world.deliverIncoming(from: contact, kind: .contextual, body: fresh(Self.phrases, from: drawn, by: contact.address))
                }
            }
            scheduleNextArrival()
        }
    }

    func reply(to message: NetworkMessage, from contact: Contact) {
        let delay = replies.interval(timings.replyDelay.low, timings.replyDelay.high)
        let drawn = replies.int(0...(Self.replyPhrases.count - 1))
        scheduler.schedule(after: delay + timings.confirmation, "reply") { [weak world, self] in
            guard let world, let current = world.contact(handle: contact.handle) else { return }
            world.deliverIncoming(from: current, kind: .contextual, body: fresh(Self.replyPhrases, from: drawn, by: current.address))
        }
    }

    /// The phrase drawn, or the next of `phrases` after it that `contact` has not said within
    /// `repeatWindow` (the one it said longest ago, if it said them all); noted as said now.
    /// No random draw: the streams stay as they were.
    private func fresh(_ phrases: [String], from drawn: Int, by contact: Address) -> String {
        let now = scheduler.now
        var lately = (said[contact] ?? []).filter { now - $0.at < Self.repeatWindow }
        let order = (0..<phrases.count).map { phrases[(drawn + $0) % phrases.count] }
        let text = order.first { p in !lately.contains { $0.text == p } }
            ?? order.min { a, b in (lately.last { $0.text == a }?.at ?? now) < (lately.last { $0.text == b }?.at ?? now) }!
        lately.append((text, now))
        said[contact] = lately
        return text
    }

    static let phrases = [
        "are you around later?", "sent the file, check it", "lunch tomorrow?", "ha, that's great",
        "did you see the news?", "running 10 min late", "call me when you can", "ok 👍",
        "what time works for you?", "thanks!", "the build is green again", "see you at 7",
        "can you review my PR?", "coffee?", "that's wild", "こんにちは、元気？", "on my way",
        "let me check and get back to you", "happy friday 🎉", "where did we park?",
    ]

    static let replyPhrases = [
        "got it", "sounds good", "sure, one sec", "haha yes", "👍", "will do", "thanks for letting me know",
        "ok, talk later", "perfect", "hmm, let me think",
    ]
}
