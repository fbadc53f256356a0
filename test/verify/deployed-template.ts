/**
 * The parts of a deployed template the commands find the stack's reconciler by (bin/deployment.ts), for the tests of
 * verify and game-day; no mocks, so any test file may import it.
 */
import { RECONCILER_CONFIG_ENV } from '../../lib/core/reconciler/config';

/**
 * A reconciler function as a deployed template holds it: its environment names RECONCILER_CONFIG, whose value holds
 * tokens (the deployed function's, read with GetFunctionConfiguration, is resolved).
 */
export function reconcilerFunction() {
  const value = { 'Fn::Join': ['', ['{"facts":{"kind":"alb","listenerArn":"', { Ref: 'Listener' }, '"}}']] };
  return { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: { [RECONCILER_CONFIG_ENV]: value } } } };
}
