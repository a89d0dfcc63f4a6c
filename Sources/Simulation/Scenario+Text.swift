import AppActions
import SimWorld
import SyncCore

extension Scenario {
    /// The scenario as a file says it, for `ScenarioParser` to read back: `comments` first,
    /// then the header (settle and push model only where they are not the default), then a
    /// line per step. `time` writes the duration and each step's instant (`10m`, or
    /// `SessionRecorder.time`'s `1m2s345ms`). The one place a scenario value becomes text;
    /// `Scenario.numberingLines` gives the steps the line numbers this text has.
    public func text(comments: [String] = [], time: (Interval) -> String = SessionRecorder.time) -> String {
        var lines = comments.map { "# " + $0 }
        lines += ["seed \(seed)", "duration \(time(duration))"]
        if settle != Scenario(source: source).settle { lines.append("settle \(time(settle))") }
        lines += ["contacts \(contacts)", "traffic \(SessionRecorder.rate(trafficPerHour))", "mode \(mode.rawValue)"]
        if pushModel != .ideal { lines.append("push model \(pushModel.rawValue)") }
        lines += steps.map { "at \(time($0.at - .zero)) \($0.directive.scenarioText)" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The header's line count in `text(comments:)`: the first step's line is one more.
    func headerLines(comments: Int) -> Int {
        comments + 5 + (settle != Scenario(source: source).settle ? 1 : 0) + (pushModel != .ideal ? 1 : 0)
    }

    /// The same scenario, its steps numbered by the lines `text(comments:)` writes them on,
    /// as the parser numbers them when it reads that text.
    public func numberingLines(comments: Int) -> Scenario {
        var out = self
        let first = headerLines(comments: comments) + 1
        for i in out.steps.indices { out.steps[i].line = first + i }
        out.stepCount = out.steps.count
        return out
    }
}
