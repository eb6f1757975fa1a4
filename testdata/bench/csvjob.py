# A realistic job: read a CSV of 100,000 rows, group and sum, print the top 5.
import csv, collections, io, random

random.seed(7)
rows = "\n".join(f"{random.choice('abcdefghij')}{i % 97},{i % 13}" for i in range(100_000))
totals = collections.Counter()
for key, value in csv.reader(io.StringIO(rows)):
    totals[key] += int(value)
for key, value in totals.most_common(5):
    print(key, value)
