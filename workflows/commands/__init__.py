"""CLI subcommands: name -> module. Each module defines ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int`` and imports only the standard library at top level (``--help`` stays fast)."""

COMMANDS: dict[str, str] = {
    "run": "interlingua.workflows.commands.run_workflow",
    "embed": "interlingua.workflows.commands.embed",
    "corpus": "interlingua.workflows.commands.corpus",
    "assets": "interlingua.workflows.commands.assets",
    "align": "interlingua.workflows.commands.align",
    "eval": "interlingua.workflows.commands.eval",
    "bench-pack": "interlingua.workflows.commands.bench_pack",
    "submit": "interlingua.workflows.commands.submit",
    "jobs": "interlingua.workflows.commands.jobs",
    "promote": "interlingua.workflows.commands.promote",
    "gc": "interlingua.workflows.commands.gc",
    "refresh": "interlingua.workflows.commands.refresh",
    "schedule": "interlingua.workflows.commands.schedule",
}
