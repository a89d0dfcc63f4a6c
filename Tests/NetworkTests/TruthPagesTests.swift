import Foundation
import NIOHTTP1
import ServerProtocol
import Testing
import Wire
import ServerPair
import ChatServer

/// The whole server's truth a page of users at a time: one request for every user's ledger at
/// once would hold every ledger of a big server in memory together (docs/server.md).
@Suite("The server's truth, a page at a time")
struct TruthPagesTests {
    @Test("GET /admin/truth holds 100 users a page in the order they joined, says userCount and nextPage while there are more; a bad page is 400 in words")
    func pages() throws {
        let pair = try WorldPair(contacts: 1)
        pair.server.joinsPerMinute = 1_000
        for i in 0..<205 { _ = try ServerLimitsTests.join(pair, "u\(i)") }
        var names: [String] = []
        var page: Int? = 0
        var pages = 0
        while let p = page, pages < 10 {
            let answer = try #require(ServerLimitsTests.request(pair, .GET, "/admin/truth?page=\(p)", token: pair.server.adminToken))
            #expect(answer.status == 200)
            let doc = try #require(WireValue.parse(answer.body))
            #expect(doc["userCount"]?.int64 == 205 && doc["page"]?.int64 == Int64(p))
            let users = try #require(doc["users"]?.array)
            #expect(users.count <= WorldHost.truthPageSize)
            names += users.compactMap { $0["user"]?.string }
            page = doc["nextPage"]?.int64.map(Int.init)
            pages += 1
        }
        #expect(pages == 3 && names == (0..<205).map { "u\($0)" })
        let first = try #require(ServerLimitsTests.request(pair, .GET, "/admin/truth", token: pair.server.adminToken))
        #expect(WireValue.parse(first.body)?["users"]?.array?.count == 100, "no page given: the first")
        let past = try #require(ServerLimitsTests.request(pair, .GET, "/admin/truth?page=9", token: pair.server.adminToken))
        #expect(past.status == 200 && WireValue.parse(past.body)?["users"]?.array?.isEmpty == true && WireValue.parse(past.body)?["nextPage"] == nil)
        for (query, says) in [("page=-1", "page -1"), ("page=two", "page two"), ("page=99999999", "page 99999999"), ("user=u1&page=1", "one user's is one page"),
                              ("pages=1", "unknown parameter pages")] {
            let answer = ServerLimitsTests.request(pair, .GET, "/admin/truth?\(query)", token: pair.server.adminToken)
            #expect(answer?.status == 400 && ServerLimitsTests.words(answer).contains(says), "\(query): \(ServerLimitsTests.words(answer))")
        }
    }
}
