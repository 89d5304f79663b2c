"""The pass/fail lines of the grade tests (test_grade.py, test_class.py)."""
import sys

counts = {"passed": 0, "failed": 0}


def ok(cond, what, detail=""):
    """Prints "ok   WHAT", or "FAIL WHAT" and up to 40 lines of detail."""
    if cond:
        counts["passed"] += 1
        print("ok   " + what)
    else:
        counts["failed"] += 1
        print("FAIL " + what)
        for line in str(detail).rstrip("\n").split("\n")[:40] if detail else []:
            print("     | " + line)


def finish():
    """Prints "N passed, N failed" and exits 1 when anything failed."""
    print("%d passed, %d failed" % (counts["passed"], counts["failed"]))
    sys.exit(1 if counts["failed"] else 0)
