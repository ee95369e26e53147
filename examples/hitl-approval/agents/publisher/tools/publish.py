# A stand-in for a real CMS call: it derives the post's URL from its title.
import json
import re
import sys

post = json.load(sys.stdin)
slug = re.sub(r"[^a-z0-9]+", "-", post["title"].lower()).strip("-")
print(json.dumps({"published": True, "url": "https://blog.example.com/posts/" + slug}))
