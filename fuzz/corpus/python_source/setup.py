import sys
from setuptools import setup, find_packages

# A comment with brackets: ( [ { and a quote '
TESTS = [
    "pytest>=7",  # why (not)
    'mock',
]
if sys.version_info < (3, 8):
    TESTS += ["importlib-metadata"]
BASE = ['six', "requests>=2; python_version >= '3'"]

setup(
    name='seed',
    version=f"{1}.0",
    description='''Call setup( like this ) -- it's "fine"''',
    long_description=open('README.rst').read(),
    packages=find_packages(exclude=["tests"]),
    python_requires=">=3.8",
    install_requires=BASE + ['attrs' r'' 'x'],
    extras_require={
        'fast': ['ujson', b'' and 'x'],
        'test': TESTS,
        "docs": "sphinx\n# comment\nfuro",
        'raw': [r'a\'b', rb'\x00', Rf'{x!r:>{w}}', f'{", ".join(BASE)}'],
    },
    classifiers=['Programming Language :: Python :: 3'],
)
