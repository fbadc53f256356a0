/**
 * The simulated reconciler can cold-start like the Lambda (`LibraryPolicyOptions.coldStartEverySeconds`): such a run
 * has no memory and rebuilds its state from the metrics its earlier runs printed as EMF. That history is the only state
 * the deployed Lambda keeps across environments, so a cold start must route as the warm environment routes.
 */
import { libraryPolicy } from '../../lib/sim/library-policy';
import { H4, S9 } from '../../lib/sim/scenarios';
import { runSimulation } from '../../lib/sim/simulator';

const changes = (modes: readonly string[]) => modes.filter((m, i) => i > 0 && m !== modes[i - 1]).length;

describe('a cold-started simulated reconciler routes as the warm one', () => {
  test.each([
    // Six hours of flapping: the capacity event outlives the hour of PolicyMode a cold start reads. Without the
    // published CapacityEventEntries, the cold runs take a relapse at minute 207 for a fresh event (6 mode changes, not 4).
    ['H4 EKS, a 6-hour flap', 2, { ...H4.build(2, { durationMinutes: 420, flapMinutes: 360 }), platform: 'eks' as const }, 4],
    ['S9 SageMaker (capacity writes, no floor read-back)', 3, { ...S9.build(3, {}), platform: 'sagemaker' as const }, 2],
  ])('%s, a cold start every 7 minutes', (_, seed, scenario, modeChanges) => {
    const warm = runSimulation(scenario, libraryPolicy(), { seed }).series;
    const cold = runSimulation(scenario, libraryPolicy({}, { coldStartEverySeconds: 420 }), { seed }).series;
    expect(changes(warm.modes)).toBe(modeChanges);
    expect({ modes: [...cold.modes], weights: [...cold.weights] }).toEqual({ modes: [...warm.modes], weights: [...warm.weights] });
  });
});
