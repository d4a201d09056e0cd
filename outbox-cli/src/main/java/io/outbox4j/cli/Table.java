package io.outbox4j.cli;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table: a header row, left-aligned text columns, right-aligned number columns. */
final class Table {
    private final List<String> headers;
    private final boolean[] numeric;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... headers) {
        this.headers = List.of(headers);
        this.numeric = new boolean[headers.length];
    }

    /** Right-aligns the given columns. */
    Table numeric(int... columns) {
        for (int c : columns) {
            numeric[c] = true;
        }
        return this;
    }

    Table row(Object... cells) {
        List<String> row = new ArrayList<>(cells.length);
        for (Object c : cells) {
            row.add(Text.oneLine(String.valueOf(c)));
        }
        rows.add(row);
        return this;
    }

    String render() {
        int[] width = new int[headers.size()];
        for (int c = 0; c < width.length; c++) {
            width[c] = headers.get(c).length();
            for (List<String> r : rows) {
                width[c] = Math.max(width[c], r.get(c).length());
            }
        }
        StringBuilder b = new StringBuilder();
        line(b, headers, width);
        for (List<String> r : rows) {
            line(b, r, width);
        }
        return b.toString();
    }

    private void line(StringBuilder b, List<String> cells, int[] width) {
        StringBuilder l = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            if (c > 0) {
                l.append("  ");
            }
            String cell = cells.get(c);
            String pad = " ".repeat(width[c] - cell.length());
            l.append(numeric[c] ? pad + cell : cell + pad);
        }
        b.append(l.toString().stripTrailing()).append('\n');
    }
}
