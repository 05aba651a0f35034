/** Runs `work` over the items with at most `limit` at once; the first failure rejects (after the others settle). */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && errors.length === 0) {
        const index = next++;
        await work(items[index] as T, index).catch((error: unknown) => errors.push(error));
      }
    }),
  );
  if (errors.length > 0) throw errors[0];
}
