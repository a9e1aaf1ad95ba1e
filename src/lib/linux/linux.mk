# linux — sources, data and tests of this area.
