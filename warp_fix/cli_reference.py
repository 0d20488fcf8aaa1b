"""Everything derived from the argparse parser: the Markdown CLI reference and shell completion scripts.

Generating them from `cli_parser.build_parser()` means they cannot drift from the real options:
tests/test_docs.py fails when docs/cli.md differs from `render_markdown(build_parser())`. This module
reads the parser it is given and never imports cli.py (which imports this one for `completion`).

    python -m warp_fix.cli_reference > docs/cli.md
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

REGENERATE = "python -m warp_fix.cli_reference > docs/cli.md"
USAGE_WIDTH = 100


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    parser: argparse.ArgumentParser


def subcommands(parser: argparse.ArgumentParser) -> list[Subcommand]:
    """The subcommands in the order they were added, with their one-line help ([] for a parser without any)."""
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if action is None:
        return []
    helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
    return [Subcommand(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]


def documented_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The arguments a user types: everything but --help, the subcommand selector and suppressed ones."""
    return [
        a
        for a in parser._actions
        if a.help is not argparse.SUPPRESS
        and not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
    ]


def is_remainder(action: argparse.Action) -> bool:
    return action.nargs == argparse.REMAINDER


def takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0 and bool(action.option_strings)


def value_name(action: argparse.Action) -> str:
    if action.choices:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.metavar or action.dest.upper()


def argument_syntax(action: argparse.Action) -> str:
    """How the argument is written: `--json FILE`, `--allow SLUG [SLUG ...]`, `before`, `-- COMMAND...`."""
    if is_remainder(action):
        return "-- COMMAND..."
    if not action.option_strings:
        return value_name(action) if action.choices else (action.metavar or action.dest)
    name = max(action.option_strings, key=len)
    if not takes_value(action):
        return name
    value = value_name(action)
    return f"{name} {value} [{value} ...]" if action.nargs == "+" else f"{name} {value}"


def usage_lines(prog: str, parser: argparse.ArgumentParser) -> list[str]:
    """Usage built here rather than by argparse, whose wrapping depends on the terminal and the Python version.

    Options first, then positionals, as argparse orders them; wrapped at USAGE_WIDTH under the first argument.
    """
    actions = sorted(documented_actions(parser), key=lambda a: not a.option_strings)
    lines, indent = [prog], " " * (len(prog) + 1)
    for action in actions:
        text = argument_syntax(action)
        optional = not action.required if action.option_strings else action.nargs in ("?", "*", argparse.REMAINDER)
        part = f"[{text}]" if optional else text
        if len(lines[-1]) + 1 + len(part) > USAGE_WIDTH:
            lines.append(indent + part)
        else:
            lines[-1] += " " + part
    return lines


def default_text(action: argparse.Action) -> str:
    if not takes_value(action) and action.option_strings or action.default in (None, argparse.SUPPRESS):
        return ""
    return f"`{action.default}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def argument_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | default | meaning |", "|---|---|---|"]
    for action in documented_actions(parser):
        required = " (required)" if action.required and action.option_strings else ""
        rows.append(f"| `{argument_syntax(action)}` | {default_text(action)} | {_cell(action.help or '')}{required} |")
    return rows


def render_markdown(parser: argparse.ArgumentParser) -> str:
    """docs/cli.md: the top-level usage, a table of subcommands, then one section per subcommand."""
    commands = subcommands(parser)
    lines = [
        "# Command-line reference",
        "",
        f"Generated from the argparse parser by `{REGENERATE}`: do not edit by hand.",
        "tests/test_docs.py fails when this file and the parser differ.",
        "Exit codes: [exit-codes.md](exit-codes.md).",
        "",
        f"    {parser.prog} [--version] COMMAND ...",
        "",
        parser.description or "",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [f"| [`{c.name}`](#{parser.prog}-{c.name}) | {_cell(c.help)} |" for c in commands]
    for command in commands:
        lines += command_section("##", f"{parser.prog} {command.name}", command)
        for action in subcommands(command.parser):  # `warp-fix bake key`, ...
            lines += command_section("###", f"{parser.prog} {command.name} {action.name}", action)
    return "\n".join(lines) + "\n"


def command_section(level: str, prog: str, command: Subcommand) -> list[str]:
    """A heading, the usage, the description and the argument table of one (sub)command."""
    actions = subcommands(command.parser)
    usage = [f"{prog} ACTION ..."] if actions else usage_lines(prog, command.parser)
    lines = ["", f"{level} `{prog}`", "", command.help, ""] + [f"    {line}" for line in usage] + [""]
    if command.parser.description:
        lines += [command.parser.description, ""]
    if actions:
        rows = [f"| `{a.name}` | {_cell(a.help)} |" for a in actions]
        return lines + ["| action | what it does |", "|---|---|", *rows]
    return lines + argument_table(command.parser)


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings]


def positional_choices(parser: argparse.ArgumentParser) -> list[str]:
    return [str(c) for a in parser._actions if not a.option_strings and a.choices for c in a.choices]


def bash_script(parser: argparse.ArgumentParser) -> str:
    """Options after a dash, subcommand names or positional choices otherwise, files as the fallback."""
    prog = parser.prog
    function = "_" + prog.replace("-", "_")
    commands = subcommands(parser)
    names = " ".join(c.name for c in commands)
    cases = [f'        "") options="{" ".join(option_strings(parser))}"; values="{names}" ;;']
    cases += [
        f'        {c.name}) options="{" ".join(option_strings(c.parser))}"; '
        f'values="{" ".join(positional_choices(c.parser))}" ;;'
        for c in commands
    ]
    return f"""# bash completion for {prog}, generated from its argparse parser by `{prog} completion bash`.
# Use: source <({prog} completion bash)   (or save it as ~/.local/share/bash-completion/completions/{prog})
{function}() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" command="" options="" values="" word i
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        [[ "$word" == "--" ]] && return 0  # the measured command follows: default completion
        [[ -z "$command" && "$word" != -* ]] && command="$word"
    done
    case "$command" in
{chr(10).join(cases)}
        *) return 0 ;;
    esac
    if [[ "$cur" == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    fi
}}
complete -o default -F {function} {prog}
"""


def _zsh_quote(text: str) -> str:
    return text.replace("'", "'\\''")


def _zsh_help(text: str | None) -> str:
    return _zsh_quote((text or "").replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:"))


def zsh_option_specs(action: argparse.Action) -> list[str]:
    """`_arguments` specs: '--json[help]:FILE:_files', '*--allow[help]:SLUG: ', '--timing[help]'."""
    repeat = "*" if isinstance(action, argparse._AppendAction) or action.nargs == "+" else ""
    if not takes_value(action):
        value = ""
    elif action.choices:
        value = f":{value_name(action)}:({' '.join(str(c) for c in action.choices)})"
    else:
        completer = " " if action.type in (int, float) else "_files"  # numbers: no candidates, just the hint
        value = f":{_zsh_quote(value_name(action))}:{completer}"
    return [f"'{repeat}{option}[{_zsh_help(action.help)}]{value}'" for option in action.option_strings]


def zsh_positional_specs(parser: argparse.ArgumentParser) -> list[str]:
    specs = []
    positionals = [a for a in parser._actions if not a.option_strings]
    for index, action in enumerate(positionals, start=1):
        if is_remainder(action):
            specs.append("'*::command:_normal'")
        elif action.choices:
            specs.append(f"'{index}:{action.dest}:({' '.join(str(c) for c in action.choices)})'")
        else:
            optional = ":" if action.nargs == "?" else ""
            specs.append(f"'{index}:{optional}{action.dest}:_files'")
    return specs


def zsh_script(parser: argparse.ArgumentParser) -> str:
    """Subcommands described at the first word; each subcommand's options through `_arguments -S`."""
    prog = parser.prog
    function = "_" + prog.replace("-", "_")
    commands = subcommands(parser)
    described = "\n".join(f"        '{c.name}:{_zsh_quote(c.help)}'" for c in commands)
    cases = []
    for command in commands:
        specs = [s for a in command.parser._actions if a.option_strings for s in zsh_option_specs(a)]
        specs += zsh_positional_specs(command.parser)
        body = " \\\n                ".join(specs)
        cases.append(f"        {command.name})\n            _arguments -S \\\n                {body}\n            ;;")
    return f"""#compdef {prog}
# zsh completion for {prog}, generated from its argparse parser by `{prog} completion zsh`.
# Use: source <({prog} completion zsh)   (or save it as _{prog} in a directory on $fpath)
{function}() {{
    local -a commands
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe -t commands '{prog} command' commands
        return
    fi
    local command=$words[2]
    shift words
    (( CURRENT-- ))
    case $command in
{chr(10).join(cases)}
    esac
}}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    {function} "$@"
else
    compdef {function} {prog}
fi
"""


SCRIPTS = {"bash": bash_script, "zsh": zsh_script}


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    return SCRIPTS[shell](parser)


def main() -> int:
    from warp_fix.cli_parser import build_parser

    sys.stdout.write(render_markdown(build_parser()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
