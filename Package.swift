// swift-tools-version: 6.0
import PackageDescription

// Who may import whom (docs/design.md: the table of targets, and its layers for which is
// lower; ModuleGraphTests holds both to this manifest):
//   SyncCore                  pure machines and domain values; imports nothing, not even
//                             Foundation.
//   Wire                      JSON for everything that speaks it: JSONValue (the writer) and
//                             WireValue (the reader). Foundation only.
//   SyncEngine                the sans-IO Engine (inputs in, effects and typed events out), its
//                             runner SyncDriver on the ports, the ChatStorage port, the wire
//                             decoders. SyncCore, Wire.
//   Directives                what a key, a scenario line or an operator can do: Directive, read
//                             once (DirectiveParser), FaultToggle. SyncCore.
//   ClientRuntime             the app on the user's device, whatever its world: ClientApp (the
//                             engine's runner, the one stream of events, BeliefLag), LiveSession,
//                             what a screen drives. SyncCore, SyncEngine, Directives.
//   SimulatedWorld            the in-process simulated network behind the ports; its faults in its
//                             own words (SyncCore's WorldFaults). SyncCore, SyncEngine, Wire.
//   ChatStore                 the SQLite store (GRDB): messages, cursors, learned state, the
//                             world's rows as domain values. SyncCore, SyncEngine — not
//                             SimulatedWorld.
//   SimulatedWorldInProfile   where the store and the simulated world meet: a profile keeps its
//                             world, as the world's own schema part of the profile's store (GRDB).
//                             ChatStore, SimulatedWorld, SyncCore.
//   SimulatedWorldOnDisk      the simulated world's history in a temporary SQLite file (SQLite's C
//                             API through GRDB's module), for runs bigger than memory.
//                             SimulatedWorld, SyncCore, SyncEngine.
//   Simulation                running scenarios: AppSession (world, engine, store, clock), the
//                             scenario parser and player.
//   RunReports                what runs come to: a run's measures and timeline, the fault matrix
//                             and its verdicts, the policies' goals.
//   Charts                    the SVG charts of a run's timeline and of the fault matrix.
//                             RunReports, Simulation, SyncCore.
//   Shrinking                 delta debugging (ddmin, then single removals to 1-minimal) over any
//                             array; pure, imports nothing.
//   Fuzzing                   generated scenarios, wire documents and files, and the invariants
//                             they must keep; the scenario shrinker (`simulate --shrink`, every
//                             failing fuzz case). Shrinking too.
//   ChatUI                    the view-model reducer, ViewInput.from(event), the key table, the
//                             pure render to a grid. SyncCore, SyncEngine (its events),
//                             ClientRuntime, Directives, CWidth — not Simulation.
//   CWidth                    the C library's wcwidth, for display widths.
//   CNCurses                  ncursesw through a system library target (with Swift-visible shims).
//   Config                    themes and key files (TOML), with no terminal: their tests link no
//                             ncurses.
//   TerminalUI                the thin ncurses adapter that diffs grids.
//   TerminalApp               the live app in a terminal, above the adapter: keys in, reducer,
//                             directives, frames out.
//   ServerProtocol            what server and client say to each other: routes, RPC method names,
//                             documents, the WebSocket frame reader, the protocol version.
//                             SyncCore, SyncEngine, Wire, Directives (a directive's document),
//                             swift-nio.
//   ChatServer                `synchat server`: the simulated world behind real sockets
//                             (swift-nio), many users.
//   ServerClient              the engine's ports over those sockets (`synchat --server`, `synchat
//                             bot`), on a ServerTransport: NetIO's sockets, or ServerPair's
//                             in-process one.
//   ServerPair                the server and its clients in one process, in virtual time.
//   synchat                   the thin executable: argument parsing and wiring.
//   Spawn                     ChildProcess: the one place a child process starts, for the app
//                             (--cast) and the tests, the crash harness, the bench and the width
//                             corpus alike.
//   CoreTestSupport           the test clock's words, for the pure core's tests: nothing above
//                             SyncCore.
//   TestSupport               what the test targets share (time words, temporary directories,
//                             spawning, event and golden-screen expectations, the reducer's
//                             TestStore, the fuzz budget, the .timingSensitive trait); no
//                             executable links it.
// Under Sources/TestKit, apart from the product: TestSupport, CoreTestSupport, ServerPair,
// CrashHarness, WidthCorpus and FaultProxy, for the tests and the bench's judges only.
let package = Package(
    name: "synchat",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "synchat", targets: ["synchat"]),
        .executable(name: "synchat-bench", targets: ["synchat-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The networked world: HTTP and WebSocket on loopback.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        // TLS for `synchat server` and its clients: https and wss.
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // Tests only (TestSupport's TestStore): the whole-state diff a failing reducer test prints.
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", exact: "1.7.3"),
    ],
    targets: [
        .target(name: "SyncCore"),
        // JSON, written and read, for everything that speaks it: the engine's wire readers, the
        // simulated world's documents, the server and its clients.
        .target(name: "Wire"),
        .target(name: "SyncEngine", dependencies: ["SyncCore", "Wire"]),
        .target(name: "SimulatedWorld", dependencies: ["SyncCore", "SyncEngine", "Wire"]),
        // What a key, a scenario line or an operator can do, read once (Directive, DirectiveParser).
        .target(name: "Directives", dependencies: ["SyncCore"]),
        // The app on the user's device, whatever its world: ClientApp (the engine's runner, the
        // one stream of events, BeliefLag), and LiveSession, what a screen drives.
        .target(name: "ClientRuntime", dependencies: ["SyncCore", "SyncEngine", "Directives"]),
        .target(name: "Simulation", dependencies: ["SyncCore", "SyncEngine", "SimulatedWorld", "ClientRuntime", "Directives"]),
        // What a run and the grid of worlds come to, apart from running them: a run's measures
        // (RunSummary) and timeline, the fault matrix and its verdicts, the policies' goals.
        .target(name: "RunReports", dependencies: ["ClientRuntime", "Directives", "SimulatedWorld", "Simulation", "SyncCore", "SyncEngine"]),
        // The SVG charts of a run's timeline and of the fault matrix (`simulate --chart`), apart
        // from running scenarios.
        .target(name: "Charts", dependencies: ["RunReports", "Simulation", "SyncCore"]),
        // Delta debugging over any array, pure: the scenario shrinker's core.
        .target(name: "Shrinking"),
        .target(name: "Fuzzing", dependencies: ["Directives", "SyncCore", "SyncEngine", "SimulatedWorld", "Simulation", "RunReports", "Config", "ChatUI", "Shrinking"]),
        .target(
            name: "ChatStore",
            dependencies: ["SyncCore", "SyncEngine", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(name: "SimulatedWorldInProfile", dependencies: ["ChatStore", "SimulatedWorld", "SyncCore", .product(name: "GRDB", package: "GRDB.swift")]),
        // The simulated world's history in a temporary SQLite file (`simulate --store disk`).
        .target(name: "SimulatedWorldOnDisk", dependencies: ["SimulatedWorld", "SyncCore", "SyncEngine", .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        // What server and client say to each other: routes, RPC method names, documents, the
        // WebSocket frame reader, the protocol version. Both sides use it; neither has its own copy.
        .target(name: "ServerProtocol", dependencies: ["SyncCore", "SyncEngine", "Wire", "Directives",
                                                      .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio")]),
        .target(
            name: "ChatServer",
            dependencies: ["SyncCore", "SyncEngine", "SimulatedWorld", "Directives", "ChatStore", "COpenSSL", "Wire", "ServerProtocol", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "NIOTLS", package: "swift-nio")]
        ),
        .target(
            name: "ServerClient",
            dependencies: ["SyncCore", "SyncEngine", "ClientRuntime", "Directives", "Wire", "ServerProtocol",
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "NIOTLS", package: "swift-nio")]  // NIOTLS: the handshake's end, before which a request never left
        ),
        .target(name: "Spawn"),
        .target(name: "CWidth"),
        .target(name: "ChatUI", dependencies: ["SyncCore", "SyncEngine", "ClientRuntime", "Directives", "CWidth"]),
        .systemLibrary(name: "CNCurses", providers: [.apt(["libncursesw5-dev"])]),
        // SHA-256 of the server's stored secrets: OpenSSL's libcrypto, which every
        // Debian has (libssl3); the headers are libssl-dev. swift-crypto would build a second
        // BoringSSL for one hash.
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // Themes and key files (TOML), read with no terminal: the tests of these link no ncurses.
        .target(name: "Config", dependencies: ["ChatUI", "SyncCore", .product(name: "TOMLKit", package: "TOMLKit")]),
        .target(
            name: "TerminalUI",
            dependencies: ["CNCurses", "Config", "ChatUI", "SyncEngine", "SyncCore", "Spawn"]  // Spawn: what a recorded child inherits
        ),
        // The app's loop: keys and the network's wake-ups in, the reducer, the session's
        // directives, a frame out through TerminalUI. Above the adapter, not inside it.
        .target(name: "TerminalApp", dependencies: ["TerminalUI", "Config", "ChatUI", "ClientRuntime", "Directives", "SyncEngine", "SyncCore"]),
        .executableTarget(
            name: "synchat",
            dependencies: [
                "Simulation",
                "RunReports",  // simulate's measures, --matrix
                "Charts",  // simulate --chart
                "ServerProtocol",  // routes and documents (synchat fault), the speeds a client runs a world at (--speed)
                "Directives",  // Directive, read from synchat fault's command line
                "Fuzzing",  // simulate --shrink: the scenario shrinker and the invariants
                "SimulatedWorld",
                "SyncCore",
                "SyncEngine",
                "SimulatedWorldInProfile",
                "SimulatedWorldOnDisk",
                "TerminalApp",
                "ChatUI",
                "TerminalUI",
                "Config",
                "ChatStore",
                "ChatServer",
                "ServerClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Release on Linux, for resident memory: lld packs the relative relocations of a
            // position-independent binary (DT_RELR, glibc 2.36 and later), so the loader does not
            // read a full table at every start, and the binary exports none of its symbols (Swift's
            // static-stdlib link exports them all; nothing looks them up). Still PIE. The figures
            // are in docs/benchmarks.md.
            linkerSettings: [
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
                             .when(platforms: [.linux], configuration: .release)),
            ]
        ),
        .executableTarget(name: "synchat-bench", dependencies: ["ClientRuntime", "FaultProxy", "SimulatedWorldOnDisk", "SimulatedWorld", "WidthCorpus", "CWidth", "ChatUI", "ChatStore", "CrashHarness", "Fuzzing", "Spawn", "Simulation", "RunReports", "SyncEngine", "SyncCore", "ServerClient", "ServerProtocol",
                                                                    .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]),
        // Sources/TestKit: what exists only for the tests and the bench's judges (crash-child,
        // soak, widths); synchat links none of it (ModuleGraphTests holds that).
        //
        // What the test targets share: time words, temporary directories, spawning, event and
        // golden-screen expectations, the reducer's TestStore, the fuzz budget, the lock of the
        // timing-sensitive suites.
        .target(
            name: "TestSupport",
            dependencies: ["CoreTestSupport", "Spawn", "SyncCore", "SyncEngine", "Simulation", "RunReports", "ChatUI", .product(name: "CustomDump", package: "swift-custom-dump")],
            path: "Sources/TestKit/TestSupport"
        ),
        // What the pure core's tests need (the test clock's words) and nothing above SyncCore:
        // building SyncCoreTests builds no engine, world or screen.
        .target(name: "CoreTestSupport", dependencies: ["SyncCore"], path: "Sources/TestKit/CoreTestSupport"),
        // `synchat server` and its clients in one process, in virtual time: the real server and
        // client joined by an in-process transport on NIO's EmbeddedChannel.
        .target(
            name: "ServerPair",
            dependencies: ["ChatServer", "ServerClient", "ServerProtocol", "SimulatedWorld", "SyncCore", "SyncEngine", "Wire",
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio")],
            path: "Sources/TestKit/ServerPair"
        ),
        // SIGKILLs a writer (synchat-bench crash-child) and checks the store after each kill.
        .target(name: "CrashHarness", dependencies: ["ChatStore", "SimulatedWorldInProfile", "Simulation", "Spawn", "SyncCore"],
                path: "Sources/TestKit/CrashHarness"),
        // The width corpus played through the real binary in tmux and judged on what tmux shows;
        // it shares nothing with ChatUI's width model on purpose (docs/design.md, `WidthCorpus`).
        .target(name: "WidthCorpus", dependencies: ["Spawn"], path: "Sources/TestKit/WidthCorpus"),
        // The soak's connection-level nemesis: a TCP proxy that stalls, resets and cuts.
        .target(name: "FaultProxy", dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
                path: "Sources/TestKit/FaultProxy"),
        .testTarget(name: "SyncCoreTests", dependencies: ["SyncCore", "CoreTestSupport"]),
        // ddmin against brute force; SimulatedWorld only for its seeded RandomStream.
        .testTarget(name: "ShrinkingTests", dependencies: ["Shrinking", "SimulatedWorld"]),
        .testTarget(
            name: "ScreenTests", dependencies: ["ChatUI", "SyncCore", "SyncEngine", "ClientRuntime", "Directives", "Simulation", "SimulatedWorld", "TestSupport",
                                                "TerminalUI", "Config", "TerminalApp", "WidthCorpus"]  // Simulation: to read scenario files; TerminalUI: the probe's pure reading of replies; WidthCorpus: public text for the notifications' bytes
        ),
        .testTarget(name: "ThemeTests", dependencies: ["Config", "ChatUI", "TestSupport"]),
        .testTarget(name: "StoreTests", dependencies: ["ChatStore", "SimulatedWorldInProfile", "CrashHarness", "Simulation", "SimulatedWorld", "SyncEngine", "SyncCore", "TestSupport", "WidthCorpus",
                                                    "ChatServer", .product(name: "GRDB", package: "GRDB.swift")]),
        // The networked half in one process, in virtual time: server and clients through ServerPair.
        // NIOEmbedded: a server socket's timers in virtual time (ServerLimitsTests).
        .testTarget(name: "NetworkTests", dependencies: ["FaultProxy", "ServerPair", "ChatServer", "ServerClient", "ServerProtocol", "Wire", "ClientRuntime", "Directives", "SimulatedWorld", "SyncCore", "SyncEngine",
                                                      "Simulation", "TestSupport", .product(name: "NIOHTTP1", package: "swift-nio"),
                                                      .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
                                                      .product(name: "NIOEmbedded", package: "swift-nio"),
                                                      .product(name: "NIOSSL", package: "swift-nio-ssl")]),  // NIOSSL: a close mid-handshake, typed
        // Runs the built `synchat` binary in tmux; `swift build` must come first.
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "Spawn", "WidthCorpus", "SyncCore", "SyncEngine",
                                                        "ChatUI",  // ChatUI: a cast's frames (ANSIScreen) played in tmux
                                                        .product(name: "GRDB", package: "GRDB.swift")]),  // GRDB: to damage a server's file
        .testTarget(name: "EngineTests", dependencies: ["ClientRuntime", "Directives", "SyncCore", "SyncEngine", "SimulatedWorld", "Simulation", "RunReports", "TestSupport",
                                                     "SimulatedWorldOnDisk"]),
        // The server's data folder: its rows, their damage, the profile lock.
        .testTarget(name: "ChatServerTests", dependencies: ["ChatServer", "ChatStore", "SimulatedWorldInProfile", "SyncCore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        // The simulated world's traffic, and its history on disk.
        .testTarget(name: "SimulatedWorldTests", dependencies: ["SimulatedWorld", "SimulatedWorldOnDisk", "RunReports", "Simulation", "SyncCore", "SyncEngine", "TestSupport"]),
        // Starting a child: streams, sessions, signals.
        .testTarget(name: "SpawnTests", dependencies: ["Spawn"]),
        // The fault matrix: its cells, verdicts and table, on TestSupport's one default grid.
        .testTarget(name: "RunReportsTests", dependencies: ["RunReports", "SimulatedWorld", "Simulation", "SyncCore", "SyncEngine", "TestSupport"]),
        // The client's runtime: what it believes beside the world's truth.
        .testTarget(name: "ClientRuntimeTests", dependencies: ["ClientRuntime", "Simulation", "SyncCore", "SyncEngine", "TestSupport"]),
        // The wire's own JSON reader and decoders, against Foundation's and the public width corpus.
        .testTarget(name: "WireTests", dependencies: ["Wire", "Fuzzing", "SimulatedWorld", "Simulation", "SyncCore", "SyncEngine", "TestSupport", "WidthCorpus"]),
        // The SVG charts, judged as XML and by the font's own advances.
        .testTarget(name: "ChartsTests", dependencies: ["Charts", "RunReports", "Simulation", "SyncCore", "SyncEngine", "TestSupport"]),
        // The directive vocabulary: one reader of a line, the fault keys.
        .testTarget(name: "DirectivesTests", dependencies: ["Directives", "Simulation", "SyncCore", "SyncEngine", "TestSupport"]),
        // The scenario file's parser, and a session recorded and played back.
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "Directives", "SyncCore", "SyncEngine", "TestSupport", "WidthCorpus"]),
        // The repository's layout held to the design: the module graph and its drawing, the
        // protocol's boundary, the files' size, the docs' rules, samples and words.
        .testTarget(name: "LayoutTests", dependencies: ["Fuzzing", "RunReports", "Simulation", "SyncCore", "TestSupport"]),
        .testTarget(
            name: "FuzzTests", dependencies: ["Fuzzing", "SyncCore", "SyncEngine", "SimulatedWorld", "Simulation", "RunReports", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
