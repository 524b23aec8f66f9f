"""Sales kept in SQLite, totalled by region and month."""
import sqlite3


class Store:
    def __init__(self):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE TABLE sale (region TEXT, month INTEGER, cents INTEGER)")
        self.db.execute("CREATE INDEX sale_region ON sale (region, month)")

    def add(self, rows):
        """Adds (region, month, cents) rows."""
        with self.db:
            self.db.executemany("INSERT INTO sale VALUES (?, ?, ?)", rows)

    def totals(self):
        """{(region, month): cents} over every sale."""
        return {(region, month): cents for region, month, cents in self.db.execute(
            "SELECT region, month, SUM(cents) FROM sale GROUP BY region, month")}

    def close(self):
        self.db.close()
