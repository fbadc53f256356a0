/**
 * Whether CloudWatch answered every query of a GetMetricData page in full: the one check the Reconciler's run and
 * the game day's report both make before they read a page. Pure: the page's shape, no SDK import.
 */

/** What the check reads of a GetMetricData answer (@aws-sdk/client-cloudwatch GetMetricDataCommandOutput). */
export interface MetricDataPage {
  readonly MetricDataResults?: ReadonlyArray<{
    readonly Id?: string;
    readonly StatusCode?: string;
    readonly Messages?: ReadonlyArray<{ readonly Code?: string; readonly Value?: string }>;
  }>;
  readonly Messages?: ReadonlyArray<{ readonly Code?: string; readonly Value?: string }>;
  readonly NextToken?: string;
}

/**
 * The error of a page some query of which CloudWatch did not answer in full, or undefined. A query's `StatusCode`
 * "Complete indicates that all data points in the requested time range were returned. PartialData means that an
 * incomplete set of data points were returned. You can use the NextToken value that was returned and repeat your
 * request to get more data points. NextToken is not returned if you are performing a math expression. InternalError
 * indicates that an error occurred." (Complete | InternalError | PartialData | Forbidden: API_MetricDataResult.html).
 * Read as no datapoints, an unanswered query would look like missing data, which the policy reads as healthy or as a
 * cold start (capacity mode): the caller asks again (InternalError, PartialData without a page to follow: the error is
 * named `InternalFailure`, which the one retry loop retries, lib/core/reconciler/retry.ts) or fails (`Forbidden`, a
 * denial another attempt will not lift).
 */
export function unansweredQueries(page: MetricDataPage): Error | undefined {
  const bad = (page.MetricDataResults ?? []).filter((r) => r.StatusCode === 'InternalError' || r.StatusCode === 'Forbidden'
    || (r.StatusCode === 'PartialData' && !page.NextToken));
  if (bad.length === 0) return undefined;
  const messages = [...(page.Messages ?? []), ...bad.flatMap((r) => r.Messages ?? [])].map((m) => `${m.Code}: ${m.Value}`);
  const detail = `GetMetricData did not answer ${bad.map((r) => `${r.Id} (${r.StatusCode})`).join(', ')}${messages.length > 0 ? `: ${messages.join('; ')}` : ''}`;
  return Object.assign(new Error(detail), { name: bad.some((r) => r.StatusCode === 'Forbidden') ? 'Forbidden' : 'InternalFailure' });
}
