import Dispatch
import Foundation
import NIOHTTP1
import ServerProtocol
import SyncCore
import SyncEngine
import Wire
extension NetworkWorld: IndexerPort {
    public func send(_ call: IndexerCall, reply: @escaping (Result<Data, TransportError>) -> Void) {
        io.request(.GET, IndexerRoute.path(for: call), token: secret) { [weak self] result in
            switch result {
            case .success(let a) where a.status == 200:
                self?.serverHeard()
                reply(.success(a.body))
            case .success(let a):
                self?.checkKnown(a)
                reply(.failure(TransportError(a.status == 401 ? self?.unknownWords ?? a.error : a.error)))
            case .failure(let e): reply(.failure(e))
            }
        }
    }
}

extension NetworkWorld: PublishPort {
    public func publish(from me: Address, to contact: Address, body: String, key: String, reply: @escaping (Result<Publication, TransportError>) -> Void) {
        let request = PublishRequest(to: contact, body: body, key: key).document.data
        io.request(.POST, Route.publish, body: request, token: secret) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let a) where a.status == 200:
                serverHeard()
                do {
                    reply(.success(try PublicationDocument.decode(a.body, me: self.me)))
                } catch {
                    reply(.failure(TransportError("\(error)")))
                }
            case .success(let a):
                checkKnown(a)
                // Refused for good by a server that no longer knows the user: not tried again.
                reply(.failure(a.status == 401 ? TransportError(unknownWords, final: true) : TransportError(a.error)))
            case .failure(let e): reply(.failure(e))
            }
        }
    }
}
