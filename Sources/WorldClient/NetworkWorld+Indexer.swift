import Dispatch
import Foundation
import NIOHTTP1
import SyncCore
import SyncEngine
import Wire
extension NetworkWorld: IndexerPort {
    public func send(_ call: IndexerCall, reply: @escaping (Result<Data, TransportError>) -> Void) {
        func q(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }
        let path: String
        switch call {
        case .handshakes(let d, let since): path = "/v1/indexer/handshakes?direction=\(d == .incoming ? "in" : "out")&since=\(since.milliseconds)"
        case .contextual(let a, let d, let since):
            path = "/v1/indexer/contextual?address=\(q(a.value))&direction=\(d == .incoming ? "in" : "out")&since=\(since.milliseconds)"
        case .payments(let since, let page): path = "/v1/indexer/payments?since=\(since.milliseconds)&page=\(page)"
        case .messageById(let id): path = "/v1/indexer/messages/\(q(id))"
        case .tip: path = "/v1/indexer/tip"
        }
        io.request(.GET, path, token: secret) { [weak self] result in
            switch result {
            case .success(let a) where a.status == 200: reply(.success(a.body))
            case .success(let a):
                self?.checkKnown(a)
                reply(.failure(TransportError(a.status == 401 ? self?.unknownWords ?? a.error : a.error)))
            case .failure(let e): reply(.failure(e))
            }
        }
    }
}

extension NetworkWorld: PublishPort {
    public func publish(from me: Address, to contact: Address, body: String, reply: @escaping (Result<Publication, TransportError>) -> Void) {
        let request = JSONValue.object([("to", .string(contact.value)), ("body", .string(body))]).data
        io.request(.POST, "/v1/publish", body: request, token: secret) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let a) where a.status == 200:
                do {
                    guard let root = WireValue.parse(a.body), let doc = root["message"], let list = root["spent"]?.array,
                          case let spent = list.compactMap(\.string), spent.count == list.count else { throw WireError("publish: not a publication") }
                    reply(.success(Publication(message: try Self.message(doc, me: self.me, now: nil), spent: spent)))
                } catch {
                    reply(.failure(TransportError("\(error)")))
                }
            case .success(let a):
                checkKnown(a)
                reply(.failure(TransportError(a.status == 401 ? unknownWords : a.error)))
            case .failure(let e): reply(.failure(e))
            }
        }
    }
}
