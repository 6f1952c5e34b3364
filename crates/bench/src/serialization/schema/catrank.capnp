# catrank: search results the server re-ranks by whether their snippets mention cats or dogs.
# Follows the "silly benchmarks" spec (specs/serialization-benchmarks.md).
@0xaa0310d774cb1afa;

struct SearchResultList {
  results @0 :List(SearchResult);
}

struct SearchResult {
  url @0 :Text;
  score @1 :Float64;
  snippet @2 :Text;
}
