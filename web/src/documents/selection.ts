import { useState } from 'preact/hooks';

/** The ids of the documents ticked for deleting. */
export function useSelection() {
  const [selection, setSelection] = useState(new Set<string>());
  const select = (ids: string[], on: boolean) =>
    setSelection((before) => {
      const after = new Set(before);
      for (const id of ids) {
        if (on) after.add(id);
        else after.delete(id);
      }
      return after;
    });
  return { selection, select };
}
