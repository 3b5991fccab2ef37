// An array of structs holding float3 members in a structured buffer: the element stride differs
// between SPIR-V/WGSL (std430) and Metal.
struct Segment
{
    float3 A;
    float3 B;
};

struct Path
{
    Segment Segments[3];
    float Length;
};

StructuredBuffer<Path> Paths;
RWStructuredBuffer<float> Lengths;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Path p = Paths[id.x];
    Lengths[id.x] = p.Length + p.Segments[1].A.x + p.Segments[2].B.y;
}
