"""`pvf train`: Lightning's CLI over the value-function modules and the PBS data module.

    pvf train fit --config configs/leduc_particle.yaml [--data.path FILE] [--print_config]

1. The model is any `ValueFunctionModule` subclass, chosen by `class_path`
   (`pvf.trainers.module.PositionalModule` or `...ParticleModule`).
2. The data module reads the file's layout at construction; the CLI links
   it into the model's `layout` argument (`apply_on="instantiate"`), so the
   configs never state data-dependent sizes and `--print_config` needs no file.
3. Everything else (trainer, loggers, checkpoints) comes from the config.
4. `--seed S` is accepted as pvf's usual spelling of `--seed_everything S`.
"""

from __future__ import annotations

import sys
import warnings

from pytorch_lightning.cli import LightningArgumentParser, LightningCLI

from pvf.errors import PvfError
from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.module import ValueFunctionModule


class PvfLightningCLI(LightningCLI):
    """LightningCLI that hands the data file's layout to the model."""

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.link_arguments(
            "data", "model.init_args.layout", compute_fn=lambda data: data.layout.to_dict(), apply_on="instantiate"
        )


def _alias_seed(arg: str) -> str:
    """`--seed[=S]` -> `--seed_everything[=S]`; other arguments unchanged."""
    name, sep, value = arg.partition("=")
    return ("--seed_everything" if name == "--seed" else name) + sep + value


def train_main(argv: list[str]) -> int:
    """Run `pvf train ARGV` (Lightning's CLI); returns the exit status."""
    argv = [_alias_seed(arg) for arg in argv]
    try:
        with warnings.catch_warnings():
            # `pvf` passes its own argv on; Lightning warns when sys.argv differs
            warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
            PvfLightningCLI(
                ValueFunctionModule,
                PbsDataModule,
                subclass_mode_model=True,
                seed_everything_default=0,
                auto_configure_optimizers=False,
                args=argv,
                save_config_kwargs={"overwrite": True},
                parser_kwargs={"prog": "pvf train"},
            )
    except PvfError as exc:
        print(f"pvf train: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, --print_config and argument errors exit
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0
