// The two IPC channels between the Electron main process and the preload, named once for both
// sides; nothing else ever crosses IPC (ARCHITECTURE: raw IPC in two files).

/** Renderer → main: `invoke(INVOKE_CHANNEL, method, params)`, answered with the contract's Reply. */
export const INVOKE_CHANNEL = 'slotscope:invoke';
/** Main → renderer: `send(EVENT_CHANNEL, eventName, payload)` for every contract event. */
export const EVENT_CHANNEL = 'slotscope:event';
