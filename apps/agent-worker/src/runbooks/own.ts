// Every name a runbook file brings (node IDs, channels, agents) is looked up as an own property and nothing else: a name
// every object has (`constructor`, `toString`) is then simply not there, validated or not, and never Object.prototype's.
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
