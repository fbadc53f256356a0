import { BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS, blueGreenStepsFloor } from '../../lib/core/platform/blue-green-deployment';
import { SAGEMAKER_RULES } from '../../lib/core/validation/rules';

const variant = (name: string, provisionSeconds: number, modelDataDownloadSeconds = 1200, containerStartupSeconds = 1200) =>
  ({ name, provisionSeconds, modelDataDownloadSeconds, containerStartupSeconds });

describe('blue/green deployment floor', () => {
  test('the bake plus the longest variant\'s provisioning, download and start-up limits', () => {
    const floor = blueGreenStepsFloor({ bakeSeconds: 600, variants: [variant('a', 300), variant('b', 900, 600, 60), variant('c', 600)] });
    expect(floor).toEqual({ seconds: 600 + 600 + 1200 + 1200, variant: variant('c', 600) });
  });

  test('no variant, no floor (the endpoint then fails on its missing variants)', () => {
    expect(blueGreenStepsFloor({ bakeSeconds: 600, variants: [] })).toBeUndefined();
  });

  test('with every step at its rule\'s maximum the floor still fits the API maximum, so some explicit limit always passes', () => {
    const max = (rule: { readonly kind: string; readonly max?: number }) => (rule.kind === 'number' ? rule.max! : NaN);
    const worst = blueGreenStepsFloor({
      bakeSeconds: max(SAGEMAKER_RULES['deployment.bakeTime']),
      variants: [variant('a', max(SAGEMAKER_RULES['variants[].provisionTimeout']), max(SAGEMAKER_RULES.modelDataDownloadTimeout),
        max(SAGEMAKER_RULES.containerStartupHealthCheckTimeout))],
    })!.seconds;
    expect(worst).toBe(14400);
    expect(worst).toBeLessThanOrEqual(BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS.max);
    expect(SAGEMAKER_RULES['deployment.maximumExecutionTimeout']).toMatchObject(BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS);
  });
});
