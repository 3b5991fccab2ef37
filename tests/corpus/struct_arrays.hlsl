// An array of structs holding float3 members in a structured buffer: std430 strides it by 32
// (a float3 is 16-aligned), Slang's Metal by 24 (packed_float3). Metal's members are declared
// aligned float3 (through Slang's wrapper of the array), so every target has std430's layout.
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
