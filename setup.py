"""The one build step pyproject.toml cannot express: ``irmeasures_markov.pth`` at the top of site-packages.

Everything else (metadata, packages, the ``_irmeasures_markov_hook`` module,
entry points) is declared in pyproject.toml.  The .pth file makes ``ir_measures``
find this package's measures without ``import irmeasures_markov``; see
docs/integration-hook.md and ``_irmeasures_markov_hook``.
"""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "irmeasures_markov.pth"
SOURCE = Path(__file__).resolve().parent / PTH


class build_py_with_pth(build_py):
    """build_py, plus the .pth file copied to the root of the wheel (site-packages)."""

    def run(self):
        super().run()
        self.copy_file(str(SOURCE), str(Path(self.build_lib, PTH)), preserve_mode=False)
        if getattr(self, "editable_mode", False):
            # an editable wheel holds only what setuptools writes into the unpacked wheel (the `install`
            # command's install_lib), not build_lib: put the .pth there so editable installs get the hook too
            install_lib = getattr(self.get_finalized_command("install"), "install_lib", None)
            if install_lib:
                self.copy_file(str(SOURCE), str(Path(install_lib, PTH)), preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        return list(super().get_outputs(include_bytecode)) + [str(Path(self.build_lib, PTH))]


setup(cmdclass={"build_py": build_py_with_pth})
