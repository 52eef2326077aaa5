/** Commands of this group are registered here as they are built. */
import type { Command } from 'commander';

export function registerClientCommands(_program: Command): void {}
