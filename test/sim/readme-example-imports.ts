// What the docs/simulator.md example imports from the package, resolved inside the repository.
export { defineCapacityClasses, planCapacity, type ServiceContract } from '../../lib/core';
export {
  AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT, buildScenario, capBetween, defineScenario, llamaChatSpecs, runJob,
} from '../../lib/sim';
