import Directives
import SimulatedWorld
import SyncCore

extension Scenario {
    /// The scenario as a file says it, for `ScenarioParser` to read back: `comments` first,
    /// then the header (settle and push model only where they are not the default), then a
    /// line per step. `time` writes the duration and each step's instant (`10m`, or
    /// `SessionRecorder.time`'s `1m2s345ms`). The one place a scenario value becomes text;
    /// `numberingLines` gives the steps the line numbers this text has.
    public func text(comments: [String] = [], time: (Interval) -> String = SessionRecorder.time) -> String {
        let lines = header(comments: comments, time: time) + steps.map { "at \(time($0.at - .zero)) \($0.directive.scenarioText)" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The same scenario, its steps numbered by the lines `text(comments:)` writes them on,
    /// as the parser numbers them when it reads that text.
    public func numberingLines(comments: [String]) -> Scenario {
        var out = self
        let first = header(comments: comments, time: SessionRecorder.time).count + 1
        for i in out.steps.indices { out.steps[i].line = first + i }
        out.stepCount = out.steps.count
        return out
    }

    /// The comment and header lines `text` writes before the steps.
    private func header(comments: [String], time: (Interval) -> String) -> [String] {
        var lines = comments.map { "# " + $0 }
        lines += ["seed \(seed)", "duration \(time(duration))"]
        if settle != Scenario(source: source).settle { lines.append("settle \(time(settle))") }
        lines += ["contacts \(contacts)", "traffic \(SessionRecorder.rate(trafficPerHour))", "mode \(mode.rawValue)"]
        if pushModel != .ideal { lines.append("push model \(pushModel.rawValue)") }
        return lines
    }
}
