import ClientRuntime
import SyncEngine

extension AppSession: LiveSession {
    public var wakeDescriptor: Int32? { nil }
    public var fixedSpeed: Double? { nil }
}
