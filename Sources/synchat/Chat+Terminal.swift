import ArgumentParser
import ChatUI
import Foundation
import TerminalUI

extension Chat {
    /// `--cast FILE`: the chat runs as a child on a pseudo-terminal, recorded (`CastRecorder`);
    /// this process ends with its status.
    func recordCast(_ path: String) throws -> Never {
        let arguments = CastRecorder.childArguments(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        do { Foundation.exit(try CastRecorder.record(to: path, arguments: arguments)) } catch let refusal as CastRecorder.Refusal {
            refuse(refusal.description)
        }
    }

    /// `--emoji`, else `SYNCHAT_EMOJI`, else `auto`; a bad value of either is one line, exit 2.
    func emojiRequest() throws -> TerminalProbe.Request {
        if let emoji {
            guard let r = TerminalProbe.Request(rawValue: emoji) else { throw ValidationError("--emoji \(emoji): expected auto, full or safe") }
            return r
        }
        if let env = ProcessInfo.processInfo.environment["SYNCHAT_EMOJI"], !env.isEmpty {
            guard let r = TerminalProbe.Request(rawValue: env) else { throw ValidationError("SYNCHAT_EMOJI=\(env): expected auto, full or safe") }
            return r
        }
        return .auto
    }

    /// `--notify`, else `SYNCHAT_NOTIFY`, else `auto`; a bad value of either is one line, exit 2.
    func notifyRequest() throws -> DesktopNotification.Request {
        let expected = DesktopNotification.Request.allCases.map(\.rawValue).joined(separator: ", ")
        if let notify {
            guard let r = DesktopNotification.Request(rawValue: notify) else { throw ValidationError("--notify \(notify): expected \(expected)") }
            return r
        }
        if let env = ProcessInfo.processInfo.environment["SYNCHAT_NOTIFY"], !env.isEmpty {
            guard let r = DesktopNotification.Request(rawValue: env) else { throw ValidationError("SYNCHAT_NOTIFY=\(env): expected \(expected)") }
            return r
        }
        return .auto
    }

    /// `--links on|off` (default on); another value is one line, exit 2.
    func linksWanted() throws -> Bool {
        switch links {
        case nil, "on": return true
        case "off": return false
        case let other?: throw ValidationError("--links \(other): expected on or off")
        }
    }
}
