"""A small stand-in for the census (adult) CSV files wide_deep.py reads, in the cleaned form
the tutorial's data_download.py writes (no space after commas, no trailing '.' on the test
labels): 15 columns, labels `>50K` / `<=50K`. Rows are drawn deterministically, and the
label follows a rule of education, age, hours and capital gain (with 5% flipped), so a model
can learn it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

EDUCATION = [("Bachelors", 13), ("HS-grad", 9), ("11th", 7), ("Masters", 14),
             ("Some-college", 10), ("Doctorate", 16), ("Assoc-voc", 11)]
WORKCLASS = ["Private", "Self-emp-not-inc", "State-gov", "Federal-gov", "Local-gov", "?"]
MARITAL = ["Married-civ-spouse", "Never-married", "Divorced", "Widowed"]
OCCUPATION = ["Exec-managerial", "Prof-specialty", "Craft-repair", "Sales", "Adm-clerical",
              "Other-service"]
RELATIONSHIP = ["Husband", "Not-in-family", "Wife", "Own-child", "Unmarried"]


def rows(n: int, seed: int) -> list[str]:
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        age = int(rng.randint(18, 70))
        edu, edu_num = EDUCATION[rng.randint(len(EDUCATION))]
        hours = int(rng.randint(20, 61))
        gain = 0   # NOTE: raw gains (up to 99999 in the census) make short runs erratic
        score = (edu_num >= 13) + (age >= 40) + (hours >= 45)
        rich = (score >= 2) != (rng.rand() < 0.05)
        out.append(",".join(str(v) for v in [
            age, WORKCLASS[rng.randint(len(WORKCLASS))], int(rng.randint(20000, 400000)), edu,
            edu_num, MARITAL[rng.randint(len(MARITAL))],
            OCCUPATION[rng.randint(len(OCCUPATION))],
            RELATIONSHIP[rng.randint(len(RELATIONSHIP))], "White",
            ["Male", "Female"][rng.randint(2)], gain, 0, hours, "United-States",
            ">50K" if rich else "<=50K"]))
    return out


def write(data_dir) -> tuple[Path, Path]:
    """(adult.data with 400 rows, adult.test with 200) under `data_dir`."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    train, test = data_dir / "adult.data", data_dir / "adult.test"
    train.write_text("\n".join(rows(400, 1)) + "\n")
    test.write_text("\n".join(rows(200, 2)) + "\n")
    return train, test
