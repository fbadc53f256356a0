// The example report of docs/verify.md is what verify prints for the conforming account of account.ts (the same code
// path a real run takes, against mocked clients): the page cannot drift from the command.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../bin/verify';
import { healthyAccountBeforeAnyEvent, resetAccount } from './account';

beforeEach(resetAccount);

test('docs/verify.md shows the report verify prints', async () => {
  healthyAccountBeforeAnyEvent();
  const out: string[] = [];
  expect(await main(['--stack', 'SdService', '--region', 'us-east-1'], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'verify.md'), 'utf8');
  const example = /<!-- verify-example -->\n```text\n([\s\S]*?)```/.exec(page)?.[1];
  expect(example).toBe(`$ npx cdk-capacity-verify --stack SdService --region us-east-1\n${out.join('\n')}\n`);
});
