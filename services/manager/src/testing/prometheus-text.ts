// The parser ships no types: its output, as far as tests read it.
// @ts-expect-error -- untyped package (parse-prometheus-text-format)
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One metric family of a scrape, as parse-prometheus-text-format returns it. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }>;
}

/**
 * Parse a `/metrics` body with an independent Prometheus text-format parser (not prom-client,
 * which wrote it): throws on anything Prometheus would not read.
 *
 * @example parsePrometheusText('# TYPE x counter\nx 1\n')[0].name === 'x'
 */
export function parsePrometheusText(text: string): MetricFamily[] {
  return (parsePrometheusTextFormat as (t: string) => MetricFamily[])(text);
}
