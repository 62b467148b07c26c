// A table of setting rows (src/util/setting-rows.ts) as commander options: each row's flag with
// its help and default, a repeatable row collecting its texts, a row's alternative switch. No
// commander defaults: a flag not given leaves the value to its row's default (readSettings).
import type { Command } from 'commander';
import { settingHelp, type SettingTable } from '../util/setting-rows.js';

export function addSettingFlags(command: Command, rows: SettingTable): Command {
  for (const row of Object.values(rows)) {
    const flags = row.arg === '' ? row.flag : `${row.flag} ${row.arg}`;
    if (row.repeatable)
      command.option(flags, settingHelp(row), (value: string, previous: string[] = []) => [
        ...previous,
        value,
      ]);
    else command.option(flags, settingHelp(row));
    if (row.alternative) command.option(row.alternative.flag, row.alternative.help);
  }
  return command;
}
