// Public API of the simulator: define services and scenarios with the library's own capacity classes, run them
// against the library's policy and the baselines, and report. See README "Simulator and benchmark".
export { Rng } from './rng';
export {
  AZURE_CODE_OUTPUT, AZURE_CODE_PROMPT, AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT, type ArrivalPattern, diurnalProfile,
  generateTrace, type RateProfile, type TokenDistribution, type TokenTable, type Trace, traceStatistics, type WorkloadSpec,
} from './workload';
export {
  type AvailabilityStep, type CapacityEvent, type ClassDatapoint, type DemandDatapoint, type Interruption,
  type ScenarioInstance, type ServiceModel, type SimClass,
} from './model';
export { type ClassRuntimeBehavior, serviceModelFromContract, simClassesFromPlan } from './classes';
export { type HpaModel, type PlatformKind, type PlatformModel, platformModel, PLATFORMS, type TargetTrackingModel } from './platform';
export {
  type Decision as SimDecision, type Observation as SimObservation, type PolicyContext as SimPolicyContext,
  type PolicyFactory as SimPolicyFactory, type RoutingPolicy,
} from './policy';
export {
  BASELINES, capacityOnly, costOnly, oracle, retryOnPreferred, roundRobin, staticWeights, twoStateSwitch,
} from './baselines';
export { libraryPolicy } from './library-policy';
export { runSimulation, type RunOptions, type RunResult, type RunSeries } from './simulator';
export { computeMetrics, type RunMetrics } from './metrics';
export { traceHeadline, traceLines } from './trace';
export { llamaChatService, llamaChatSpecs, sd21Service, sd21Specs, type ServiceDefinition } from './services';
export {
  buildScenario, capBetween, defineScenario, findScenario, P1, S0, S1, S2, S3, S4, S5, S6, S7, S8, S9, type ScenarioBuilder,
  type ScenarioDefinition, type ScenarioOptions, type ScenarioParams, SCENARIOS,
} from './scenarios';
export { type Job as SimJob, type JobResult as SimJobResult, POLICY_NAMES, runJob, type ScenarioSummary, summarise } from './suite';
export { runJobs, type RunJobsOptions } from './parallel';
export { checkTargets, htmlReport, markdownReport, scenarioCharts, type SuiteReport, terminalTable } from './report';
export { type DegradationReport, degradationReport, formatDegradationReport } from './planning';
export { erlangC, erlangCMeanWait, erlangCWaitQuantile } from './erlang';
export { simulateMmc } from './validation';
