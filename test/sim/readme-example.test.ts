// The "define your own scenario" example of docs/simulator.md, compiled and run (keep the two in sync).
import {
  AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT, buildScenario, capBetween, defineCapacityClasses, defineScenario, llamaChatSpecs,
  planCapacity, runJob, type ServiceContract,
} from './readme-example-imports';

const contract: ServiceContract = {
  name: 'my-chat',
  slo: { ttftP95Ms: 1500, itlP95Ms: 50, deadlineMs: 30000 },
  requestShape: { meanPromptTokens: 1155, meanOutputTokens: 215 },
  peakRequestsPerSecond: 12,
};
const classes = defineCapacityClasses(llamaChatSpecs(), { contract, platform: 'ec2' });

export const scenario = defineScenario('my-shortage', 'My preferred class runs dry', 'L40S capped at 2 instances for 20 minutes.',
  { capMinutes: 20 }, (_seed, p) => buildScenario({
    id: 'my-shortage',
    title: 'My preferred class runs dry',
    service: {
      contract, classes, plan: planCapacity(contract, classes), prefillWeight: 0.05,
      behavior: { l40s: { provisioningSeconds: [240, 360] }, inf2: { provisioningSeconds: [300, 480] }, a10g: { provisioningSeconds: 300 } },
    },
    durationSeconds: 3600,
    workload: { pattern: 'near-poisson', meanRatePerSecond: 8, promptTokens: AZURE_CONVERSATION_PROMPT, outputTokens: AZURE_CONVERSATION_OUTPUT },
    initialReplicas: { l40s: 2 },
    availability: { l40s: capBetween(600, 600 + p.capMinutes * 60, 2) },
    capacityEvents: [{ className: 'l40s', onset: 600, restoration: 600 + p.capMinutes * 60 }],
  }));

test('a user-defined scenario runs against the library policy and the oracle', () => {
  const result = runJob({ scenarioId: 'my-shortage', scenarioFile: __filename, seed: 1, policies: ['library', 'oracle'], charts: false });
  expect(result.metrics.library.arrivals).toBeGreaterThan(20_000);
  expect(result.metrics.library.littleLawMaxError).toBeLessThan(1e-9);
  expect(result.metrics.oracle.usdPerMillionSloTokens).toBeLessThan(result.metrics.library.usdPerMillionSloTokens);
});
