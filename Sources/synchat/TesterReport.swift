import RunReports
import Simulation
import SyncCore

/// The README of `simulate --report DIR`: what each file is and the exact commands that
/// replay it from inside the folder (the same seed gives the same files, byte for byte).
enum TesterReport {
    /// `name`: the copy's (`given`, the file's, when a shell takes it as it is).
    static func readme(scenario name: String, given: String, policy: String, flags: String, chartLane: String, lines: Int, summary: RunSummary) -> String {
        let lane = chartLane == "requests" ? "" : " --chart-lane \(chartLane)"
        let lost = summary.messagesLost == 0 ? "none lost" : "\(summary.messagesLost) lost"
        return """
            # A synchat run: \(name)

            Written by `synchat simulate --scenario \(UntrustedText.visible(given)) --policy \(policy)\(flags) --report DIR`.
            Under \(policy): \(summary.messagesSent) messages sent, \(lost), \(summary.duplicates) duplicates, \
            \(summary.backendRequests) backend requests, push \(summary.finalPushState.rawValue) at the end.

            | file | what it is |
            | --- | --- |
            | `\(name)` | the scenario, as it was given |
            | `events.log` | the event log under \(policy), \(lines) lines: what `--events` prints |
            | `compare.txt` | naive, seed and adaptive side by side: what `--compare` prints |
            | `chart.svg` | the three runs over time (`--chart`): open it in a browser |

            ## Replay it

            From this folder; each `diff` prints nothing when the replay gives the same files:

            ```sh
            synchat simulate --scenario \(name) --policy \(policy)\(flags) --events | diff - events.log
            synchat simulate --scenario \(name) --compare\(flags) | diff - compare.txt
            synchat simulate --scenario \(name) --compare\(flags) --chart chart-again.svg\(lane) > /dev/null && cmp chart.svg chart-again.svg
            ```

            Watch it in the terminal UI: `synchat --ephemeral --scenario \(name) --policy \(policy) --speed 30`.
            Keep only the lines that matter for one event: `synchat simulate --scenario \(name) --policy \(policy) --shrink --until "TEXT"`
            (see docs/simulate.md, "Shrinking a run", and docs/testing-by-hand.md).

            """
    }
}
