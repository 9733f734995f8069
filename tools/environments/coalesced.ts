/**
 * One function of a key made from a batch function: the calls made in the same tick (the approval gate asks for a
 * command's paths at once) are answered by one call of `many`, in their order.
 */
export function coalesced<T>(many: (keys: string[]) => Promise<T[]>): (key: string) => Promise<T> {
  let batch: { keys: string[]; answers: Promise<T[]> } | undefined;
  return (key) => {
    if (!batch) {
      const keys: string[] = [];
      batch = {
        keys,
        answers: Promise.resolve().then(() => {
          batch = undefined;
          return many(keys);
        }),
      };
    }
    const at = batch.keys.push(key) - 1;
    return batch.answers.then((answers) => answers[at] as T);
  };
}
