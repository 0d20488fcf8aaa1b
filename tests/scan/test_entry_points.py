"""Entry points: __main__.py, main guards and console scripts."""

from __future__ import annotations


def test_entry_points_of_every_kind(scan):
    index = scan(
        {
            "pyproject.toml": """
                [project]
                name = "app"
                [project.scripts]
                app-run = "app.cli:main"
                missing = "nowhere.mod:main"
            """,
            "app/__init__.py": "",
            "app/__main__.py": "from app.cli import main\nmain()\n",
            "app/cli.py": """
                def main():
                    pass

                if __name__ == "__main__":
                    main()
            """,
            "tools/bench.py": """
                import warp as wp

                if __name__ == '__main__':
                    wp.init()
            """,
        }
    )
    entries = {(e.kind, e.file, e.line, e.name) for e in index.entry_points}
    assert entries == {
        ("main_module", "app/__main__.py", 1, None),
        ("main_guard", "app/cli.py", 4, None),  # found without parsing: cli.py never mentions warp
        ("main_guard", "tools/bench.py", 3, None),
        ("console_script", "app/cli.py", None, "app-run"),
        ("console_script", None, None, "missing"),
    }
