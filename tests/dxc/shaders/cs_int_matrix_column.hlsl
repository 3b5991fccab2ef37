// A column-major non-float matrix in a buffer: DXC refuses it, and Slang stores it by rows
// while its reflection says columns. An error at the member.
cbuffer Params : register(b0)
{
    int2x3 cells; // EXPECT-ERROR
    float scale;
};

RWStructuredBuffer<float> results : register(u1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    results[id.x] = cells[1][2] * scale;
}
