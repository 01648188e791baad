"""`pvf train`: Lightning's CLI over the value-function module and the PBS data module.

    pvf train fit --config configs/data/leduc.yaml --config configs/model/particle.yaml [--data.path FILE]
                  [--run-dir DIR] [--print_config]
    pvf train validate|test --config ... --ckpt_path C   (losses on the file's validation trunks)

0. Configs compose (`pvf.trainers.configs`): `configs/train.yaml`, the
   training defaults, is read first without being named (Lightning's
   `default_config_files`), then a game's data config and a network's
   model config. A config of the six removed `configs/<game>_<architecture>.yaml`
   is one line naming the two that replace it (exit 2).
1. The model is `ValueFunctionModule` (or a subclass) handed an architecture
   (`model.init_args.architecture: {class_path: pvf.valuefn.particle.Particle, ...}`).
2. The data module reads the file's layout at construction; the CLI links
   it into the model's `layout` argument (`apply_on="instantiate"`), so the
   configs never state data-dependent sizes and `--print_config` needs no file.
3. Every run lives in `<run_dir>/<game>_<architecture>/` (default run_dir
   `runs`): the game from the data file (its short name, e.g. `leduc`), the
   architecture from the config. The loggers' `save_dir` is set there and
   checkpoints follow the first logger, so `--run-dir` moves the whole run
   (`--run_dir`, its old spelling, still works and says so on stderr).
4. Errors users can cause (a bad file, option values the module or data
   refuse, an accelerator that is not there, a run that fails, and every
   configuration mistake jsonargparse finds: a typo in a key, a wrong
   class path, broken YAML, a missing config, `nan` where a number goes;
   `pvf.trainers.config_errors`) are one line on stderr with exit status 2, and a failed run leaves no new version
   folder behind. `predict` is not offered (there is nothing to predict
   from a PBS file that `pvf evaluate` does not do better).
5. `--seed S` is accepted as pvf's usual spelling of `--seed_everything S`.
"""

from __future__ import annotations

import importlib
import logging
import re
import shutil
import signal
import warnings
from pathlib import Path

from lightning_fabric.utilities.exceptions import MisconfigurationException
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI
from pytorch_lightning.utilities.exceptions import SIGTERMException

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError, say_on_stderr
from pvf.games.paper import ALIASES
from pvf.trainers.config_errors import accepted_keys, option_strings, summarize
from pvf.trainers.configs import CONFIG_DIR, TRAINING_DEFAULTS
from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.lightning_warnings import ignore_lightning_warnings
from pvf.trainers.module import ValueFunctionModule
from pvf.valuefn.registry import ARCHITECTURES


class PvfLightningCLI(LightningCLI):
    """LightningCLI that hands the data file's layout to the model and names the run directory."""

    @staticmethod
    def subcommands() -> dict[str, set[str]]:
        return {k: v for k, v in LightningCLI.subcommands().items() if k != "predict"}

    def init_parser(self, **kwargs) -> LightningArgumentParser:
        """Lightning's parser, whose errors are one `PvfError` line (not the usage text and a multi-line report)."""
        parser = super().init_parser(**kwargs)
        configs = list(getattr(self, "config_files", ()))

        def error(message: str, ex: Exception | None = None) -> None:
            keys = accepted_keys([ValueFunctionModule, PbsDataModule, *ARCHITECTURES.values()])
            raise PvfError(summarize(message, option_strings(parser.format_help()), keys, configs))

        parser.error = error  # argparse and jsonargparse report every parse error through it
        return parser

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument(
            "--run-dir",
            dest="run_dir",
            default="runs",
            help="runs go to RUN_DIR/<game>_<architecture>/ (logs and checkpoints)",
        )
        parser.link_arguments(
            "data", "model.init_args.layout", compute_fn=lambda data: data.layout.to_dict(), apply_on="instantiate"
        )

    def before_instantiate_classes(self) -> None:
        config = self.config[self.subcommand]
        self.run_path = Path(config.run_dir) / run_name(
            config.data.path, config.model.init_args.architecture.class_path
        )
        loggers = config.trainer.logger
        for logger in loggers if isinstance(loggers, list) else [loggers]:
            if logger is not None and not isinstance(logger, bool) and "save_dir" in logger.init_args:
                logger.init_args.save_dir = str(self.run_path)
        config.trainer.default_root_dir = str(self.run_path)


def run_name(data_path: str, architecture_class_path: str) -> str:
    """`<game>_<architecture>`: the game's short name (alias, else its string made path-safe) and the registry name."""
    game = DataLayout.from_file(data_path, target="current").game  # any file has the current iterate's values
    short = next((alias for alias, full in ALIASES.items() if full == game), None)
    short = short or re.sub(r"[^A-Za-z0-9]+", "_", game).strip("_")
    module, _, name = architecture_class_path.rpartition(".")
    try:
        architecture = getattr(importlib.import_module(module), name).name
    except (ImportError, AttributeError):
        raise PvfError(f"no value-function architecture {architecture_class_path!r}") from None
    return f"{short}_{architecture}"


def _alias(arg: str) -> str:
    """`--seed[=S]` -> `--seed_everything[=S]` (pvf's usual spelling); `--run_dir` -> `--run-dir`, said on stderr."""
    name, sep, value = arg.partition("=")
    if name == "--run_dir":
        say_on_stderr("pvf train: --run_dir is now --run-dir")
    return {"--seed": "--seed_everything", "--run_dir": "--run-dir"}.get(name, name) + sep + value


_SPLIT_CONFIG = re.compile(r"(?P<game>[A-Za-z0-9]+)_(?P<model>[A-Za-z0-9-]+)\.yaml")


def check_split_configs(argv: list[str]) -> None:
    """PvfError naming the data and model configs that replace a removed `configs/<game>_<architecture>.yaml`."""
    for i, arg in enumerate(argv):
        name, sep, value = arg.partition("=")
        if name != "--config":
            continue
        given = value if sep else (argv[i + 1] if i + 1 < len(argv) else "")
        match = _SPLIT_CONFIG.fullmatch(Path(given).name)
        if Path(given).exists() or not match:
            continue
        game, model = match["game"], match["model"]
        if (CONFIG_DIR / "data" / f"{game}.yaml").is_file() and (CONFIG_DIR / "model" / f"{model}.yaml").is_file():
            where = Path(given).parent
            raise PvfError(
                f"{given} was split in two: use --config {where / 'data' / f'{game}.yaml'} "
                f"--config {where / 'model' / f'{model}.yaml'} (training defaults: configs/train.yaml)"
            )


def given_configs(argv: list[str]) -> list[str]:
    """The files of every `--config F` / `--config=F` in `argv`."""
    found = []
    for i, arg in enumerate(argv):
        name, sep, value = arg.partition("=")
        if name == "--config" and (sep or i + 1 < len(argv)):
            found.append(value if sep else argv[i + 1])
    return found


def _entries(path: Path) -> set[Path] | None:
    """Everything under `path`; None if it does not exist."""
    return set(path.rglob("*")) if path.is_dir() else None


def train_main(argv: list[str]) -> int:
    """Run `pvf train ARGV` (Lightning's CLI); returns the exit status."""
    argv = [_alias(arg) for arg in argv]
    try:
        check_split_configs(argv)
    except PvfError as exc:
        say_on_stderr(f"pvf train: error: {exc}")
        return 2
    cli: PvfLightningCLI | None = None
    before: set[Path] | None = None
    created: Path | None = None  # the outermost folder of the run path that did not exist yet

    class _Tracked(PvfLightningCLI):
        config_files = given_configs(argv)

        def before_instantiate_classes(self) -> None:
            nonlocal cli, before, created
            super().before_instantiate_classes()
            cli, before = self, _entries(self.run_path)
            missing = [p for p in (self.run_path, *self.run_path.parents) if not p.exists()]
            created = missing[-1] if missing else None

    defaults = {subcommand: {"default_config_files": [str(TRAINING_DEFAULTS)]} for subcommand in _Tracked.subcommands()}
    try:
        with warnings.catch_warnings():
            # `pvf` passes its own argv on; Lightning warns when sys.argv differs
            warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
            ignore_lightning_warnings()
            # its "Seed set to 0" would stand before every one-line error; the seed is in the saved config
            logging.getLogger("lightning_fabric.utilities.seed").setLevel(logging.WARNING)
            _Tracked(
                ValueFunctionModule,
                PbsDataModule,
                subclass_mode_model=True,
                seed_everything_default=0,
                auto_configure_optimizers=False,
                args=argv,
                save_config_kwargs={"overwrite": True},
                parser_kwargs={"prog": "pvf train", "description": __doc__.splitlines()[0], **defaults},
            )
    except SIGTERMException:  # Lightning ends a SIGTERMed fit so (a SystemExit without a code)
        say_on_stderr("pvf train: interrupted; checkpoints written so far are kept")
        return 128 + signal.SIGTERM
    except SystemExit as exc:  # --help, --print_config and argument errors exit
        if isinstance(exc.__context__, KeyboardInterrupt):  # Lightning ends an interrupted fit with sys.exit(1)
            say_on_stderr("pvf train: interrupted; checkpoints written so far are kept")
            return 130
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except (PvfError, MisconfigurationException, ValueError, RuntimeError, OSError) as exc:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        elif cli is not None:
            _remove_new(cli.run_path, before)
        say_on_stderr(f"pvf train: error: {_reason(exc)}")
        return 2
    except KeyboardInterrupt:
        say_on_stderr("pvf train: interrupted; checkpoints written so far are kept")
        return 130
    return 0


def _reason(exc: BaseException) -> str:
    """One line: the PvfError behind `exc` if there is one (jsonargparse wraps what the
    model's constructor raised), else the first line of the deepest cause's message."""
    chain = [exc]
    while chain[-1].__cause__ is not None or chain[-1].__context__ is not None:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    found = next((e for e in chain if isinstance(e, PvfError)), None)
    for e in ([found] if found else []) + chain[::-1]:
        text = str(e).strip()
        if text:
            return text.splitlines()[0]
    return type(exc).__name__


def _remove_new(run_path: Path, before: set[Path] | None) -> None:
    """Remove what a failed run created under the existing folder `run_path`."""
    new = (_entries(run_path) or set()) - (before or set())
    for path in new:
        if path.parent not in new and path.exists():
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
