"""Package layout only; metadata lives in pyproject.toml.

The design card keeps top-level folders named after build and turn stages (codegen/, runtime/,
generated/, ci/). They are mapped into one import namespace, ``ummaya.*``, so nothing generic like
``runtime`` is ever installed top-level. Sub-packages are discovered so a new module folder needs
no edit here.
"""

from setuptools import find_packages, setup

ROOTS = {
    "ummaya": "ummaya",
    "ummaya.model": "model",
    "ummaya.wire": "wire",
    "ummaya.codegen": "codegen",
    "ummaya.runtime": "runtime",
    "ummaya.generated": "generated",
    "ummaya.ci": "ci",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for name, folder in ROOTS.items():
    packages.append(name)
    package_dir[name] = folder
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

setup(
    packages=packages,
    package_dir=package_dir,
    # The citizen page (runtime/serve/static/) ships in the package: `ummaya serve` serves it at /.
    package_data={"ummaya.generated": ["*.json", "*.lock", "**/*.json", "**/*"],
                  "ummaya.runtime.serve": ["static/*"]},
    include_package_data=True,
)
