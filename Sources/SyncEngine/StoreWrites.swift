import SyncCore

/// The store's writes the engine has asked for and not yet heard back from (one
/// type, not five variables kept in step across files): by id, with the sync that waits on
/// each; the cursors and the learned state they carry, which reads must already see; the
/// state last saved; and the writes of a retry after a failure, whose landing ends the trouble.
/// What a failed write carried is `UnsavedChanges`'s.
struct StoreWrites {
    /// Writes in flight, by id, with the sync run that waits for each.
    private var inFlight: [Int: (write: StoreWrite, runId: Int?)] = [:]
    /// Cursor moves written and not answered yet: reads see them (rule 9's reads).
    private var cursors: [SyncObject: SyncCursor] = [:]
    /// The learned state written and not answered yet, and the last one the store took.
    private var stateInFlight: PersistedEngineState?
    private(set) var lastSaved: PersistedEngineState?
    /// The writes of a retry; the trouble ends when all of them land.
    private var retryBatch: Set<Int>?

    init(lastSaved: PersistedEngineState?) { self.lastSaved = lastSaved }

    /// Write `id` is asked for.
    mutating func asked(_ id: Int, _ write: StoreWrite, runId: Int?) {
        inFlight[id] = (write, runId)
        switch write {
        case .messages(_, let cursor?): cursors[cursor.object] = cursor.cursor
        case .state(let state): stateInFlight = state
        default: break
        }
    }

    /// Write `id` answered, stored or not: what it was, and the run waiting for it; nil for
    /// an id not asked (or answered already).
    mutating func answered(_ id: Int, stored: Bool) -> (write: StoreWrite, runId: Int?)? {
        guard let entry = inFlight.removeValue(forKey: id) else { return nil }
        switch entry.write {
        case .messages(_, let cursor?):
            if cursors[cursor.object] == cursor.cursor { cursors[cursor.object] = nil }
        case .state(let state):
            if stored { lastSaved = state }
            if stateInFlight == state { stateInFlight = nil }
        default: break
        }
        return entry
    }

    func isInFlight(_ id: Int) -> Bool { inFlight[id] != nil }

    /// A cursor as written, even if its write has not answered yet.
    func cursor(_ object: SyncObject) -> SyncCursor? { cursors[object] }

    /// Whether `state` is news to the store: neither saved nor on its way.
    func needsSaving(_ state: PersistedEngineState) -> Bool { state != lastSaved && state != stateInFlight }

    /// A retry asked for these writes.
    mutating func retrying(_ ids: Set<Int>) { retryBatch = ids }

    /// Write `id` answered during a retry: true when it was the last of the retry's writes
    /// (the trouble is over). A failure ends the retry.
    mutating func retryAnswered(_ id: Int, failed: Bool) -> Bool {
        guard var batch = retryBatch, batch.remove(id) != nil else { return false }
        if failed {
            retryBatch = nil
            return false
        }
        retryBatch = batch.isEmpty ? nil : batch
        return batch.isEmpty
    }
}
