// Where Slotscope keeps its history database by default, following each platform's convention
// (XDG on Linux, Application Support on macOS, %APPDATA% on Windows).
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, posix, win32 } from 'node:path';

/** The machine facts defaultDataDir reads; injectable so every platform can be tested anywhere. */
export interface PlatformInfo {
  readonly platform?: NodeJS.Platform;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
}

/**
 * The per-user data folder: Linux `$XDG_DATA_HOME/slotscope` (or `~/.local/share/slotscope`),
 * macOS `~/Library/Application Support/Slotscope`, Windows `%APPDATA%\Slotscope`. Not created.
 */
export function defaultDataDir(appName: string = 'Slotscope', info: PlatformInfo = {}): string {
  const platform = info.platform ?? process.platform;
  const env = info.env ?? process.env;
  const home = info.home ?? homedir();
  if (platform === 'win32') {
    return win32.join(env.APPDATA || win32.join(home, 'AppData', 'Roaming'), appName);
  }
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', appName);
  const xdg = env.XDG_DATA_HOME;
  // The XDG spec says a relative value is invalid and must be ignored.
  const base = xdg && isAbsolute(xdg) ? xdg : posix.join(home, '.local', 'share');
  return posix.join(base, appName.toLowerCase());
}

/** `<dataDir>/history.sqlite`, creating the folder if needed. */
export function defaultDatabaseFile(dataDir: string = defaultDataDir()): string {
  mkdirSync(dataDir, { recursive: true });
  return join(dataDir, 'history.sqlite');
}
