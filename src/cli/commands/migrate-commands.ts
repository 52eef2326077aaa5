/** Commands of this group are registered here as they are built. */
import type { Command } from 'commander';

export function registerMigrateCommands(_program: Command): void {}
