#!/usr/bin/env python3
"""The reference for bench/validate-bench.js: the loop an analyst would write with
Google's phonenumbers library (Debian's python3-phonenumbers). It reads the CSV, parses
each phone cell with the task country, keeps the valid numbers of that country as E.164
digits (without the +), drops repeats, and writes them in first-seen order, one a line.

Usage: /usr/bin/python3 bench/validate-reference.py LIST.csv COLUMN COUNTRY OUT.txt
"""
import csv
import sys

import phonenumbers

path, column, country, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
calling_code = phonenumbers.country_code_for_region(country)
kept = {}
with open(path, newline="", encoding="utf-8-sig") as source:
    rows = csv.reader(source)
    next(rows)
    for row in rows:
        cell = row[column] if len(row) > column else ""
        try:
            number = phonenumbers.parse(cell, country)
        except phonenumbers.NumberParseException:
            continue
        if number.country_code == calling_code and phonenumbers.is_valid_number(number):
            kept.setdefault(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)[1:], None)
with open(out, "w") as target:
    target.writelines(f"{identifier}\n" for identifier in kept)
