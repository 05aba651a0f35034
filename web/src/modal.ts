import { useEffect, useRef } from 'preact/hooks';

/** A <dialog> shown as a modal when `open` turns true; it closes itself (Escape, a button) and says so through onClose. */
export function useModal(open: boolean) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (open && !dialog.current?.open) dialog.current?.showModal();
  }, [open]);
  return dialog;
}
