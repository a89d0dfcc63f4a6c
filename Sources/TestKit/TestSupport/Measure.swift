import RunReports
import Simulation
import SyncCore

/// Measures of one run of a scenario under a policy: the run, and its summary.
public func measure(_ text: String, _ policy: SyncPolicy, file: String = "policy.scenario") throws -> (ScenarioRun, RunSummary) {
    let run = ScenarioRun(scenario: try ScenarioParser.parse(text, file: file), policy: policy)
    run.run()
    return (run, RunSummary(run))
}
