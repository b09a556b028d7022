/**
 * The abort reason of a run stopped by a signal: an Error (code that rethrows a
 * signal's reason throws something with a stack) that says which signal, so
 * SIGTERM can end with 143 and Ctrl-C with 130.
 */
export class SignalStop extends Error {
  override readonly name = "AbortError";

  constructor(readonly signalName: "SIGINT" | "SIGTERM") {
    super(signalName === "SIGTERM" ? "Terminated." : "Interrupted.");
  }
}

/** Which signal stopped the run; an abort for any other reason counts as Ctrl-C. */
export function stopSignal(signal: AbortSignal): "SIGINT" | "SIGTERM" | undefined {
  if (!signal.aborted) return undefined;
  return signal.reason instanceof SignalStop ? signal.reason.signalName : "SIGINT";
}
